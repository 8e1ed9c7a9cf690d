// The ES module entry as typed for an `import` user: the same functions and overloads as the
// CommonJS entry (index.d.mts re-exports index.d.ts), and the default export.
import smartread, { smartReadSync, smartRead, readMany, engineInfo, type SettledRead } from 'smartread';
import * as cjs from 'smartread';
import { expectType } from './assert.js';

expectType<Buffer>()(smartReadSync('/etc/hosts'));
expectType<string>()(smartReadSync('/etc/hosts', 'utf8'));
expectType<Buffer>()(await smartRead('/etc/hosts'));
expectType<string[]>()(await readMany(['/a'], 'utf8'));
expectType<SettledRead<Buffer | string>[]>()(await readMany(['/a'], { settle: true }));
expectType<'native' | 'js'>()(engineInfo().engine);
expectType<typeof cjs.smartReadSync>()(smartread.smartReadSync);
// @ts-expect-error: the module has no such export
void smartread.readFileSync;

// The serve entries as ES modules: the same handler, and the plugin as the default export.
import { serveStatic } from 'smartread/serve';
import serveStaticPlugin, { serveStaticPlugin as named } from 'smartread/serve/fastify';
expectType<string>()(serveStatic('public').root);
expectType<typeof named>()(serveStaticPlugin);
