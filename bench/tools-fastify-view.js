// The server of bench:tools' fastify-view case: fastify with @fastify/view rendering EJS pages
// from a template directory made here, in development mode (production: false), where
// @fastify/view reads the page's template with fs.promises.readFile on every request and EJS
// reads the templates it includes with fs.readFileSync. Prints its port, then serves until killed.
'use strict';
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const fastify = require('fastify');
const view = require('@fastify/view');
const ejs = require('ejs');

const templates = fs.mkdtempSync(path.join(os.tmpdir(), 'smartread-bench-views-'));
const paragraph = 'Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor. ';
fs.writeFileSync(path.join(templates, 'header.ejs'), '<header><h1><%= title %></h1><nav>' + '<a href="#">link</a> '.repeat(40) + '</nav></header>\n');
fs.writeFileSync(path.join(templates, 'footer.ejs'), '<footer>' + paragraph.repeat(10) + '</footer>\n');
for (let i = 0; i < 20; i++) {
  fs.writeFileSync(path.join(templates, `page-${i}.ejs`), [
    '<!doctype html><html><body>',
    "<%- include('header', { title }) %>",
    '<main>',
    `<p>${paragraph.repeat(20 + i * 4)}</p>`,
    '<ul><% for (const item of items) { %><li><%= item %></li><% } %></ul>',
    '</main>',
    "<%- include('footer') %>",
    '</body></html>',
  ].join('\n'));
}

const app = fastify();
app.register(view, { engine: { ejs }, root: templates, production: false });
app.get('/page/:n', (request, reply) => {
  const n = Number(request.params.n) % 20;
  return reply.view(`page-${n}.ejs`, { title: `Page ${n}`, items: Array.from({ length: 10 }, (_, k) => `item ${n}.${k}`) });
});
process.on('SIGTERM', () => {
  app.close().then(() => {
    fs.rmSync(templates, { recursive: true, force: true });
    process.exit(0);
  });
});
app.listen({ port: 0, host: '127.0.0.1' }).then(() => {
  process.stdout.write(`${app.server.address().port}\n`);
});
