#!/usr/bin/env node
// Registry stand-in of the podman end-to-end test (test/e2e/testbed/node-image.ts builds what it serves): the
// read side of the OCI distribution API over plain HTTP, enough for `podman pull NAME@DIGEST` and NAME:TAG.
//   GET /v2/                                   200 (API version check)
//   GET|HEAD /v2/<name>/manifests/<tag|digest> the manifest, with its media type and Docker-Content-Digest
//   GET|HEAD /v2/<name>/blobs/<digest>         a blob
// Usage: registry.cjs DIR LISTEN_HOST:PORT LOGFILE. Serves DIR/blobs/sha256/<hex> and DIR/tags/<tag>; every request
// is a JSON line in LOGFILE (method, path, status).
'use strict';
const fs = require('fs');
const http = require('http');
const path = require('path');

const [dir, listen, logFile] = process.argv.slice(2);
if (!dir || !listen || !logFile) {
  console.error('usage: registry.cjs DIR HOST:PORT LOGFILE');
  process.exit(2);
}
fs.mkdirSync(path.dirname(logFile), { recursive: true });
const [host, port] = listen.split(':');

function blobPath(digest) {
  const m = /^sha256:([0-9a-f]{64})$/.exec(digest);
  return m ? path.join(dir, 'blobs', 'sha256', m[1]) : undefined;
}

const server = http.createServer((req, res) => {
  const send = (status, headers, body) => {
    fs.appendFileSync(logFile, JSON.stringify({ method: req.method, path: req.url, status }) + '\n');
    res.writeHead(status, headers);
    if (!body || req.method === 'HEAD') res.end();
    else if (typeof body === 'string' || Buffer.isBuffer(body)) res.end(body);
    else body.pipe(res);
  };
  const url = new URL(req.url, 'http://registry');
  if (url.pathname === '/v2/' || url.pathname === '/v2') return send(200, { 'Content-Type': 'application/json', 'Docker-Distribution-API-Version': 'registry/2.0' }, '{}');
  const m = /^\/v2\/(.+)\/(manifests|blobs)\/([^/]+)$/.exec(url.pathname);
  if (!m || (req.method !== 'GET' && req.method !== 'HEAD')) return send(404, { 'Content-Type': 'application/json' }, '{"errors":[{"code":"NOT_FOUND"}]}');
  let digest = decodeURIComponent(m[3]);
  if (m[2] === 'manifests' && !digest.startsWith('sha256:')) {
    const tagFile = path.join(dir, 'tags', digest);
    digest = fs.existsSync(tagFile) ? fs.readFileSync(tagFile, 'utf8').trim() : '';
  }
  const file = blobPath(digest);
  if (!file || !fs.existsSync(file)) return send(404, { 'Content-Type': 'application/json' }, '{"errors":[{"code":"MANIFEST_UNKNOWN"}]}');
  const size = fs.statSync(file).size;
  const type = m[2] === 'manifests' ? JSON.parse(fs.readFileSync(file, 'utf8')).mediaType : 'application/octet-stream';
  send(200, { 'Content-Type': type, 'Content-Length': String(size), 'Docker-Content-Digest': digest }, m[2] === 'manifests' ? fs.readFileSync(file) : fs.createReadStream(file));
});
server.listen(Number(port), host, () => console.log(`registry stand-in serving ${dir} on ${listen}`));
