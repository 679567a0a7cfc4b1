// V8's code cache for the built bundles (dist/sno-reconfigure*.cjs), for the test suite only: scripts/run-tests.mjs
// preloads this file (NODE_OPTIONS=--require) into every Node process the tests start, and the suite starts the
// bundles about a thousand times (the agent, validate, media build). Each start compiled the same half megabyte
// again; with the cache V8 reads back what an earlier start compiled (about 2 s of CPU less in 32 s of
// test/integration/run/run-ssh and run-node-names, 2026-11-28). It is how the MachineConfig's loader runs the agent on
// a node (src/render/payload.ts renderLoader: vm.Script with the CommonJS wrapper's parameters and V8's code cache),
// so the bundle runs the same way here. What runs is unchanged: V8 refuses a cache made from other source text,
// another V8 or other flags (`cachedDataRejected`) and compiles afresh; the module gets the same exports, require,
// module, __filename and __dirname as from Node's own loader (the bundles have no native import():
// esbuild.config.mjs). The agent on a node never loads this file.
// SNO_BUNDLE_CODE_CACHE is the cache's folder (run-tests.mjs: the run's own, .cache/tests/run-<pid>/code-cache);
// without it nothing changes.
'use strict';
const Module = require('node:module');
const path = require('node:path');

const folder = process.env.SNO_BUNDLE_CODE_CACHE;
const BUNDLE = /[\\/]dist[\\/]sno-reconfigure[^\\/]*\.cjs$/;

if (folder) {
  const compile = Module.prototype._compile;
  Module.prototype._compile = function compileWithCodeCache(content, filename) {
    if (!BUNDLE.test(filename)) return compile.call(this, content, filename);
    // Loaded only here: every other Node process of the suite pays nothing for this file.
    const fs = require('node:fs');
    const vm = require('node:vm');
    const { createHash } = require('node:crypto');
    const file = path.join(folder, createHash('sha256').update(`${process.version}\0${filename}\0`).update(content).digest('hex').slice(0, 40));
    let cachedData;
    try {
      cachedData = fs.readFileSync(file);
    } catch {
      // None yet: this start makes it.
    }
    // Node's loader accepts a leading #! line; inside the wrapper it is kept as a comment, on the same line.
    const body = content.startsWith('#!') ? `//${content.slice(2)}` : content;
    const script = new vm.Script(Module.wrap(body), { filename, ...(cachedData && { cachedData }) });
    if (cachedData === undefined || script.cachedDataRejected) {
      // At exit: the cache then holds the functions this start compiled lazily as well. Renamed in whole, so that
      // processes starting at the same time read either none or a complete one.
      process.once('exit', () => {
        try {
          fs.mkdirSync(folder, { recursive: true });
          fs.writeFileSync(`${file}.${process.pid}`, script.createCachedData());
          fs.renameSync(`${file}.${process.pid}`, file);
        } catch {
          // A cache not written is only a slower start next time.
        }
      });
    }
    const moduleRequire = (id) => this.require(id);
    moduleRequire.resolve = (request, options) => Module._resolveFilename(request, this, false, options);
    moduleRequire.main = process.mainModule;
    moduleRequire.cache = Module._cache;
    moduleRequire.extensions = Module._extensions;
    return script.runInThisContext({ displayErrors: true }).call(this.exports, this.exports, moduleRequire, this, filename, path.dirname(filename));
  };
}
