// A small app that knows nothing of smartread: it reads its config with fs.readFileSync and its
// templates with fs.promises.readFile and fs.readFile, as countless apps and the libraries under
// them do, and prints a page. Run as it is, node:fs reads the files:
//
//   node app.js
//
// Run with smartread/register loaded first, the same code is served by smartread, unchanged:
//
//   node --import smartread/register app.js
//   node --import smartread/register --import ./report-served.mjs app.js   (and says so)
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const config = JSON.parse(fs.readFileSync(path.join(__dirname, 'config.json'), 'utf8'));
const template = (name) => path.join(__dirname, 'templates', name);

fs.promises.readFile(template('layout.html'), 'utf8').then((layout) => {
  fs.readFile(template('item.html'), 'utf8', (err, item) => {
    if (err) throw err;
    const items = config.items.map((name) => item.replaceAll('{{name}}', name)).join('');
    process.stdout.write(layout.replaceAll('{{title}}', config.title).replace('{{items}}', items));
  });
});
