#!/usr/bin/env node
// The stand-in tools' server: one Node process per test process runs every call of host-tool.cjs's tools, which
// ./tool-client.sh hands over a local TCP connection — a Node start per call cost about 120 ms of CPU on the 2-core
// reference machine, some 5,000 calls in a full `npm test`. A call runs as it would in a process of its own (the
// caller's arguments, environment, stdin and working directory; its exit status, stdout and stderr), and a held call
// whose caller was killed ends as that process would have.
// Usage: tool-server.cjs PORT_FILE — listens on 127.0.0.1, writes its port to PORT_FILE once it listens, and exits
// when its stdin closes (the test process that started it has ended).
'use strict';
const fs = require('node:fs');
const net = require('node:net');
const { runTool } = require('./host-tool.cjs');

const portFile = process.argv[2];
if (!portFile) {
  process.stderr.write('usage: tool-server.cjs PORT_FILE\n');
  process.exit(2);
}

/**
 * A request, as tool-client.sh writes it: NUL-terminated fields — "sno-tool/1", the tool, the working directory,
 * the number of arguments and each argument, the number of environment entries and each NAME=value, the length of
 * stdin in bytes — then stdin's bytes. Returns undefined while the request is incomplete.
 */
function parse(buf) {
  const fields = [];
  let at = 0;
  const field = () => {
    const end = buf.indexOf(0, at);
    if (end < 0) return undefined;
    const v = buf.subarray(at, end).toString('utf8');
    at = end + 1;
    fields.push(v);
    return v;
  };
  const count = () => {
    const v = field();
    return v === undefined ? undefined : Number(v);
  };
  if (field() === undefined) return undefined;
  if (fields[0] !== 'sno-tool/1') throw new Error(`not a stand-in tool request: ${JSON.stringify(fields[0].slice(0, 40))}`);
  const tool = field();
  const cwd = field();
  const nargs = count();
  if (nargs === undefined) return undefined;
  const args = [];
  for (let i = 0; i < nargs; i++) {
    const a = field();
    if (a === undefined) return undefined;
    args.push(a);
  }
  const nenv = count();
  if (nenv === undefined) return undefined;
  const env = {};
  for (let i = 0; i < nenv; i++) {
    const e = field();
    if (e === undefined) return undefined;
    const eq = e.indexOf('=');
    env[e.slice(0, eq)] = e.slice(eq + 1);
  }
  const stdinLength = count();
  if (stdinLength === undefined || buf.length - at < stdinLength) return undefined;
  return { tool, cwd, args, env, stdin: buf.subarray(at, at + stdinLength).toString('utf8') };
}

const server = net.createServer((socket) => {
  let buf = Buffer.alloc(0);
  let started = false;
  let closed = false;
  socket.on('close', () => (closed = true));
  socket.on('error', () => (closed = true));
  socket.on('data', (chunk) => {
    if (started) return;
    buf = Buffer.concat([buf, chunk]);
    let call;
    try {
      call = parse(buf);
    } catch (e) {
      socket.destroy(e);
      return;
    }
    if (!call) return;
    started = true;
    runTool({ ...call, gone: () => closed }).then((r) => {
      if (closed) return;
      const stdout = Buffer.from(r.stdout);
      const stderr = Buffer.from(r.stderr);
      socket.end(Buffer.concat([Buffer.from(`${r.code} ${stdout.length} ${stderr.length}\n`), stdout, stderr]));
    });
  });
});

server.listen(0, '127.0.0.1', () => {
  const tmp = `${portFile}.${process.pid}`;
  fs.writeFileSync(tmp, `${server.address().port}\n`);
  fs.renameSync(tmp, portFile);
});
process.stdin.on('data', () => {});
process.stdin.on('end', () => {
  fs.rmSync(portFile, { force: true });
  process.exit(0);
});
