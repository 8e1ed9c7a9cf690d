// Reads every config file of a directory tree in one readMany call and merges them into one
// object, nested as the files are: services/db.yaml becomes config.services.db. JSON files are
// parsed as JSON, .yaml/.yml files as flat `key: value` lines. A file that cannot be read or
// parsed is reported on stderr and left out; the others still count.
//
//   node read-config-tree.js [DIR]        (without DIR: a sample tree in a temp dir)
'use strict';
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { readMany } = require('smartread');

function sampleTree() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'config-tree-'));
  fs.mkdirSync(path.join(dir, 'services'));
  fs.writeFileSync(path.join(dir, 'app.json'), '{ "name": "shop", "port": 8080 }');
  fs.writeFileSync(path.join(dir, 'services', 'db.yaml'), 'host: db.internal\nport: 5432\nssl: true\n');
  fs.writeFileSync(path.join(dir, 'services', 'cache.yml'), '# seconds\nttl: 60\n');
  return dir;
}

// Flat YAML: `key: value` lines, `#` comments; numbers and true/false become what they say.
function parseFlatYaml(text) {
  const out = {};
  for (const line of text.split('\n')) {
    const match = /^\s*([\w.-]+)\s*:\s*(.*?)\s*$/.exec(line.replace(/#.*/, ''));
    if (!match) continue;
    const [, key, raw] = match;
    const value = raw.replace(/^(["'])(.*)\1$/, '$2');
    out[key] = value === 'true' || value === 'false' ? value === 'true' : value !== '' && !isNaN(value) ? Number(value) : value;
  }
  return out;
}

async function main() {
  const dir = process.argv[2] ?? sampleTree();
  const files = fs.readdirSync(dir, { recursive: true }).filter((f) => /\.(json|ya?ml)$/.test(f)).sort();
  // One call for the whole list, as Promise.allSettled over fs.promises.readFile would give it
  // (settle: a bad file does not reject the rest), with a bounded number of reads in flight.
  const outcomes = await readMany(files.map((f) => path.join(dir, f)), { encoding: 'utf8', settle: true });
  const config = {};
  outcomes.forEach((outcome, i) => {
    const file = files[i];
    try {
      if (outcome.status === 'rejected') throw outcome.reason;
      const value = file.endsWith('.json') ? JSON.parse(outcome.value) : parseFlatYaml(outcome.value);
      const keys = file.replace(/\.\w+$/, '').split(path.sep);
      const parent = keys.slice(0, -1).reduce((node, key) => (node[key] ??= {}), config);
      parent[keys.at(-1)] = value;
    } catch (err) {
      console.error(`skipped ${file}: ${err.message}`);
    }
  });
  console.log(JSON.stringify(config, null, 2));
  if (process.argv[2] === undefined) fs.rmSync(dir, { recursive: true });
}

main();
