#!/usr/bin/env node
// The smartread command: explain how files would be read, and run the benchmark.
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import * as fs from 'node:fs';
import { explain, type Explanation } from './read/explain';
import { calibrate, profileTable } from './read/calibrate';
import { strategyNames, type Strategy } from './read/strategies';

const usage = `usage: smartread <command> [arguments]

commands:
  explain [--strategy S] [--json] <path>...
      how smartRead would read each file now (fast path, io_uring, thread pool...), why,
      and the filesystem and device it is on. S: ${strategyNames.join(', ')} (default auto).
  calibrate [--quick] [--cold-size BYTES] [--out FILE] [dir]
      measures in dir (default: the temp dir) up to which size the fast path pays and which
      io_uring chunking reads a cold file fastest; writes the profile (default
      ./smartread-profile.json) for SMARTREAD_PROFILE=FILE or useProfile(FILE).
  bench [options]
      the benchmark suite (npm run bench); 'smartread bench --help' lists its options.
  help, --help, -h
      this text.
`;

// What a user sees for one file: the way, the reason, the device.
function describe(file: string, e: Explanation): string {
  const { device } = e;
  const where = [device.filesystem, device.kind !== 'none' ? `${device.kind} ${device.block ?? ''}`.trim() : '', `dev ${device.dev}`]
    .filter(Boolean).join(', ');
  return `${file}\n  strategy: ${e.strategy}\n  reason:   ${e.reason}\n  device:   ${where}\n`;
}

function explainCommand(args: string[]): number {
  let strategy: Strategy = 'auto';
  let json = false;
  const files: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === '--json') {
      json = true;
    } else if (arg === '--strategy') {
      strategy = args[++i] as Strategy;
    } else if (arg.startsWith('--strategy=')) {
      strategy = arg.slice('--strategy='.length) as Strategy;
    } else if (arg === '--') {
      files.push(...args.slice(i + 1));
      break;
    } else if (arg.startsWith('-')) {
      process.stderr.write(`smartread explain: unknown option ${arg}\n\n${usage}`);
      return 2;
    } else {
      files.push(arg);
    }
  }
  if (files.length === 0) {
    process.stderr.write(`smartread explain: no path given\n\n${usage}`);
    return 2;
  }
  let status = 0;
  const results: Array<{ path: string } & (Explanation | { error: { code?: string; message: string } })> = [];
  for (const file of files) {
    try {
      const e = explain(file, { strategy });
      results.push({ path: file, ...e });
      if (!json) process.stdout.write(describe(file, e));
    } catch (err) {
      status = 1;
      const { code, message } = err as NodeJS.ErrnoException;
      results.push({ path: file, error: { code, message } });
      if (!json) process.stderr.write(`${file}\n  error: ${message}\n`);
    }
  }
  if (json) process.stdout.write(`${JSON.stringify(results.length === 1 ? results[0] : results, null, 2)}\n`);
  return status;
}

async function calibrateCommand(args: string[]): Promise<number> {
  let quick = false;
  let coldSize: number | undefined;
  let out = 'smartread-profile.json';
  let dir: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === '--quick') {
      quick = true;
    } else if (arg === '--cold-size' || arg === '--out') {
      const value = args[++i];
      if (value === undefined) {
        process.stderr.write(`smartread calibrate: ${arg} needs a value\n`);
        return 2;
      }
      if (arg === '--out') {
        out = value;
      } else {
        coldSize = Number(value);
        if (!Number.isSafeInteger(coldSize) || coldSize < 1) {
          process.stderr.write(`smartread calibrate: --cold-size must be a number of bytes, not ${value}\n`);
          return 2;
        }
      }
    } else if (arg.startsWith('-') || dir !== undefined) {
      process.stderr.write(`smartread calibrate: unexpected ${arg}\n\n${usage}`);
      return 2;
    } else {
      dir = arg;
    }
  }
  try {
    const profile = await calibrate({ dir, coldSize, quick, log: (line) => process.stderr.write(`${line}\n`) });
    fs.writeFileSync(out, `${JSON.stringify(profile, null, 2)}\n`);
    process.stdout.write(`${profileTable(profile)}\n\nprofile written to ${out}: use it with SMARTREAD_PROFILE=${out} or useProfile('${out}')\n`);
    return 0;
  } catch (err) {
    process.stderr.write(`smartread calibrate: ${(err as Error).message}\n`);
    return 1;
  }
}

// The benchmark ships with the package: bench/index.js beside dist/.
function benchCommand(args: string[]): number {
  const script = path.resolve(__dirname, '..', 'bench', 'index.js');
  const run = spawnSync(process.execPath, [script, ...args], { stdio: 'inherit' });
  if (run.error) {
    process.stderr.write(`smartread bench: ${run.error.message}\n`);
    return 1;
  }
  return run.status ?? 1;
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'explain':
      return explainCommand(rest);
    case 'bench':
      return benchCommand(rest);
    case 'calibrate':
      return calibrateCommand(rest);
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(usage);
      return command === undefined ? 2 : 0;
    default:
      process.stderr.write(`smartread: unknown command '${command}'\n\n${usage}`);
      return 2;
  }
}

main(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
