// The peers' side of the bench: a process of Bun or Deno (or Node, for the tests) that the bench
// starts once per run and drives over stdin and stdout (peers.js). The timing loop runs here,
// in the peer, so that no operation pays for a round trip between processes: the same
// tinybench loop as the bench's own drivers (timing.js), the same consume.js, the same readers
// in flight (in_flight.js).
//
//   bun peer_runner.js TINYBENCH_URL
//   deno run -A --v8-flags=--expose-gc peer_runner.js TINYBENCH_URL
//   node --expose-gc peer_runner.js TINYBENCH_URL   (the bench's own drivers: see readerNamed)
//
// TINYBENCH_URL: the bench's own tinybench (its file URL), so that every runtime runs the same
// copy. The protocol, which c_read_loop.c speaks too: one command a line on stdin, one JSON
// object a line on stdout.
//   (at start)                    {"ready":true,"runtime","version","gc","loopStall"}
//   context SHAPE CONSUME FILE    {"ok":true,"files":N}
//       SHAPE 'file' (read FILE's first path) or 'files' (all of them, one operation);
//       CONSUME 'page' or 'all' (consume.js); FILE holds the paths, each ended by a NUL byte
//   verify READER                 {"ok":true,"algorithm":"sha1","lengths":[...],"digests":[...]}
//       one untimed read; a digest and a length per file
//   time READER TIME ITERATIONS WARMUP_TIME WARMUP_ITERATIONS COLD
//                                 {"ok":true,"samples":[ms...],"resources":{...},"loopStall":...}
//       timing.js's options; with COLD 1 the peer asks before every operation
//       {"evict":true,"checkAll":BOOL} and waits for a line 'evicted' (the bench has evicted the
//       files), or 'stop REASON', which ends the command with REASON as its error
//   a command that fails          {"ok":false,"error":MESSAGE}
// The process ends when stdin does.
'use strict';
const crypto = require('node:crypto');
const fs = require('node:fs');
const readline = require('node:readline');
const { IN_FLIGHT, readAllInFlight } = require('./in_flight');
const noRead = require('./no_read');
const { timeOperations, settleAllocator } = require('./timing');
const { histogramRecordsInterval } = require('./loop_stall');

/* global Bun, Deno */
const runtime = typeof Bun !== 'undefined' ? 'bun' : typeof Deno !== 'undefined' ? 'deno' : 'node';
const version = runtime === 'bun' ? Bun.version : runtime === 'deno' ? Deno.version.deno : process.versions.node;

// The readers, by the name the bench asks for. Each reads one file; a 'files' operation is a
// loop of a sync reader, or IN_FLIGHT reads in flight of an async one. Bun.file() gives bytes()
// and arrayBuffer(): bytes(), a Uint8Array as every other reader here returns, so that no
// reader pays for a view the others do not.
const readers = {
  readFileSync: { isAsync: false, read: (path) => fs.readFileSync(path) },
  'fs.promises.readFile': { isAsync: true, read: (path) => fs.promises.readFile(path) },
  'Bun.file().bytes()': { runtime: 'bun', isAsync: true, read: (path) => Bun.file(path).bytes() },
  'Deno.readFileSync': { runtime: 'deno', isAsync: false, read: (path) => Deno.readFileSync(path) },
  'Deno.readFile': { runtime: 'deno', isAsync: true, read: (path) => Deno.readFile(path) },
  // No read (no_read.js): the bench's 'consume only (no read)' and 'new Buffer + copy (no read)'.
  preloaded: { isAsync: false, read: noRead.preloaded() },
  freshCopy: { isAsync: false, read: noRead.freshCopy() },
};

// Under Node, the bench's own drivers (drivers.js) too, by name, so that Node's readers are
// timed in a process of their own as Bun's and Deno's are (index.js says why): 'driver:' and
// the driver's name, URI-encoded (names hold spaces). Loaded on first use: only Node has them.
const DRIVER_PREFIX = 'driver:';
function benchDriver(name) {
  if (runtime !== 'node') throw new Error(`the bench's drivers run under node; this is ${runtime}`);
  const { drivers } = require('./drivers');
  const { againstDrivers } = require('./against');
  const driver = [...drivers, ...againstDrivers()].find((d) => d.name === name);
  if (!driver) throw new Error(`no bench driver ${name}`);
  if (driver.shape !== 'file' && driver.shape !== 'files') throw new Error(`${name}: a driver of shape ${driver.shape} runs in the bench's process`);
  const available = driver.available();
  if (available !== true) throw new Error(`${name}: ${available}`);
  return { isAsync: Boolean(driver.async), driver };
}

function readerNamed(name) {
  if (name.startsWith(DRIVER_PREFIX)) return benchDriver(decodeURIComponent(name.slice(DRIVER_PREFIX.length)));
  const reader = readers[name];
  if (!reader) throw new Error(`no reader ${name}; the readers: ${Object.keys(readers).join(', ')}`);
  if (reader.runtime && reader.runtime !== runtime) throw new Error(`${name} needs ${reader.runtime}; this is ${runtime}`);
  return reader;
}

/** The timed operation of a reader in the context: one file, or all of them. */
function operationOf(reader, context) {
  if (!context) throw new Error('no context: send context first');
  const { paths, shape } = context;
  // A bench driver takes what its trials give it: one path, or the list.
  if (reader.driver) {
    if (reader.driver.shape !== shape) throw new Error(`${reader.driver.name} reads ${reader.driver.shape}, not ${shape}`);
    return shape === 'file' ? () => reader.driver.read(paths[0]) : () => reader.driver.read(paths);
  }
  if (shape === 'file') return () => reader.read(paths[0]);
  if (!reader.isAsync) return () => paths.map((path) => reader.read(path));
  return () => readAllInFlight(paths, IN_FLIGHT, reader.read);
}

/** The next line of stdin, or null once it has ended; lines that come early wait in order. */
function lineReader(input) {
  const lines = [];
  const waiting = [];
  let ended = false;
  const rl = readline.createInterface({ input, crlfDelay: Infinity });
  rl.on('line', (line) => (waiting.length > 0 ? waiting.shift()(line) : lines.push(line)));
  rl.on('close', () => {
    ended = true;
    while (waiting.length > 0) waiting.shift()(null);
  });
  return () => {
    if (lines.length > 0) return Promise.resolve(lines.shift());
    if (ended) return Promise.resolve(null);
    return new Promise((resolve) => waiting.push(resolve));
  };
}

const reply = (message) => process.stdout.write(`${JSON.stringify(message)}\n`);

function readContext([shape, consume, ...file]) {
  if (shape !== 'file' && shape !== 'files') throw new Error(`context: shape must be file or files, not ${shape}`);
  if (consume !== 'page' && consume !== 'all') throw new Error(`context: consume must be page or all, not ${consume}`);
  // The file name is the rest of the line: it may hold spaces.
  const list = fs.readFileSync(file.join(' '), 'utf8');
  const paths = list.split('\0').slice(0, -1);
  if (paths.length === 0) throw new Error('context: no paths');
  if (shape === 'file' && paths.length !== 1) throw new Error(`context: shape file reads one path, not ${paths.length}`);
  return { shape, consumeAll: consume === 'all', paths };
}

function digests(result, context) {
  const results = context.shape === 'file' ? [result] : result;
  if (!Array.isArray(results) || results.length !== context.paths.length) {
    throw new Error(`returned ${Array.isArray(results) ? `${results.length} results` : typeof results} for ${context.paths.length} files`);
  }
  for (const r of results) {
    if (!(r instanceof Uint8Array)) throw new Error(`returned ${r === null ? 'null' : typeof r}, not bytes`);
  }
  return {
    algorithm: 'sha1',
    lengths: results.map((r) => r.length),
    digests: results.map((r) => crypto.createHash('sha1').update(r).digest('hex')),
  };
}

function parseTiming(fields) {
  const numbers = fields.map(Number);
  if (numbers.length !== 5 || !numbers.every((n) => Number.isFinite(n) && n >= 0)) {
    throw new Error(`time: expected TIME ITERATIONS WARMUP_TIME WARMUP_ITERATIONS COLD, got '${fields.join(' ')}'`);
  }
  const [time, iterations, warmupTime, warmupIterations, cold] = numbers;
  return { timing: { time, iterations, warmupTime, warmupIterations }, cold: cold === 1 };
}

async function main() {
  const { Bench } = await import(process.argv[2]);
  const nextLine = lineReader(process.stdin);
  const collectGarbage = runtime === 'bun' ? () => Bun.gc(true) : globalThis.gc;
  const recordsInterval = await histogramRecordsInterval();
  settleAllocator(collectGarbage);
  reply({
    ready: true,
    runtime,
    version,
    gc: typeof collectGarbage === 'function',
    loopStall: recordsInterval === null ? null : recordsInterval ? 'interval' : 'lateness',
  });
  // The bench's eviction, asked for before each operation of a cold run.
  const evicted = async (checkAll) => {
    reply({ evict: true, checkAll });
    const answer = await nextLine();
    if (answer === 'evicted') return;
    throw new Error(answer === null ? 'stdin ended while waiting for an eviction' : answer.replace(/^stop /, ''));
  };
  let context = null;
  for (let line = await nextLine(); line !== null; line = await nextLine()) {
    const [command, ...fields] = line.split(' ');
    try {
      if (command === 'context') {
        context = readContext(fields);
        reply({ ok: true, files: context.paths.length });
      } else if (command === 'verify') {
        const reader = readerNamed(fields[0]);
        reply({ ok: true, ...digests(await operationOf(reader, context)(), context) });
      } else if (command === 'time') {
        const reader = readerNamed(fields[0]);
        const operation = operationOf(reader, context);
        const { timing, cold } = parseTiming(fields.slice(1));
        const result = await timeOperations({
          Bench,
          operation,
          isAsync: reader.isAsync,
          consumeAll: context.consumeAll,
          timing,
          beforeEach: cold ? evicted : null,
          collectGarbage: collectGarbage ?? (() => {}),
          loopStall: reader.isAsync && recordsInterval !== null ? { recordsInterval } : null,
        });
        reply({ ok: true, ...result });
      } else {
        throw new Error(`unknown command: ${command}`);
      }
    } catch (err) {
      reply({ ok: false, error: err.message });
    }
  }
}

main().catch((err) => {
  process.stderr.write(`peer_runner: ${err.stack}\n`);
  process.exitCode = 1;
});
