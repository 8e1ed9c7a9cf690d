// Runs in a peer runtime (Bun): one driver of one write trial, for a number of timed
// operations, each set up and cleaned away outside the timed region as bench/write.js does its
// own (write_trials.js). Prints { samples (ms), error? } as one JSON line.
//   bun bench/write_peer_runner.js '{"kind", "driver", "sizes", "operations", "scratch", "verify"}'
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { writeTrials } = require('./write_trials');

const IN_FLIGHT = 64;

async function lanes(count, each) {
  let next = 0;
  const lane = async () => {
    while (next < count) await each(next++);
  };
  await Promise.all(Array.from({ length: Math.min(IN_FLIGHT, count) }, lane));
}

const drivers = {
  tree: {
    'Bun.write ×64': (ctx) => lanes(ctx.entries.length, (i) => Bun.write(ctx.entries[i].path, ctx.entries[i].data)),
    'Bun fs sync loop': (ctx) => {
      for (const e of ctx.entries) {
        fs.mkdirSync(path.dirname(e.path), { recursive: true });
        fs.writeFileSync(e.path, e.data);
      }
    },
    'Bun fs.promises ×64': (ctx) => lanes(ctx.entries.length, async (i) => {
      await fs.promises.mkdir(path.dirname(ctx.entries[i].path), { recursive: true });
      await fs.promises.writeFile(ctx.entries[i].path, ctx.entries[i].data);
    }),
  },
  nested: {
    'Bun fs.mkdirSync loop': (ctx) => {
      for (const p of ctx.paths) fs.mkdirSync(p, { recursive: true });
    },
    'Bun fs.promises.mkdir ×64': (ctx) => lanes(ctx.paths.length, (i) => fs.promises.mkdir(ctx.paths[i], { recursive: true })),
  },
  large: {
    'Bun.write': (ctx) => Bun.write(ctx.file, ctx.data),
    'Bun fs.writeFileSync': (ctx) => fs.writeFileSync(ctx.file, ctx.data),
  },
};

async function main() {
  const request = JSON.parse(process.argv[2]);
  const trial = writeTrials(request.sizes).find((t) => t.kind === request.kind);
  const run = drivers[request.kind][request.driver];
  if (!run) throw new Error(`no driver ${request.driver} for ${request.kind}`);
  const samples = [];
  let error = null;
  for (let k = 0; k < request.operations && !error; k++) {
    const ctx = trial.prepare(path.join(request.scratch, `bun-${process.pid}-${k}`));
    try {
      const started = performance.now();
      await run(ctx);
      samples.push(performance.now() - started);
      if (request.verify && k === 0) error = trial.verify(ctx);
    } finally {
      trial.clean(ctx);
    }
  }
  process.stdout.write(`${JSON.stringify({ samples, error })}\n`);
}

main().catch((err) => {
  process.stdout.write(`${JSON.stringify({ samples: [], error: `threw: ${err.message}` })}\n`);
});
