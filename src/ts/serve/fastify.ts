/**
 * smartread/serve/fastify: serveStatic as a Fastify plugin, registered as @fastify/static is
 * (`fastify.register(serveStaticPlugin, { root, prefix })`), answering through the reply so
 * that Fastify's hooks (onSend, CORS, compression...) see every response.
 * @module
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { STATUS_CODES } from 'node:http';
import type { PathLike } from '../common/args';
import { invalidArgType, invalidArgValue } from '../common/errors';
import type { FileEntry } from './file_cache';
import { redirectTarget } from './http_rules';
import { StaticSite, type Decision, type ServeStaticOptions } from './static_site';

export type { ServeStaticOptions } from './static_site';

/** The plugin's options: serveStatic's, and where in the app the files are served. */
export interface FastifyServeStaticOptions extends Omit<ServeStaticOptions, 'fallthrough' | 'setHeaders'> {
  /** The directory to serve. */
  root: PathLike;
  /** The URL prefix the files are served under (default '/'). */
  prefix?: string;
  /** Adds reply.sendFile(path) (default true): the file at `path` beneath the root, with the
   * same headers, preconditions and ranges. */
  decorateReply?: boolean;
  /**
   * Called before a file's response, to set more (or other) headers.
   * @param reply The reply, not yet sent.
   * @param path The file's absolute path.
   * @param stats The file's stats.
   */
  setHeaders?: (reply: FastifyReply, path: string, stats: import('../read/confine').ConfinedStats) => void;
}

declare module 'fastify' {
  interface FastifyReply {
    /** Sends the file at `path` (relative to the plugin's root, resolved beneath it). */
    sendFile(path: string): FastifyReply;
  }
}

// How many times a request is decided again when its file changes between the stat and the read.
const kAttempts = 3;

function headerObject(list: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i < list.length; i += 2) out[list[i]] = list[i + 1];
  return out;
}

function statusError(status: number, cause?: Error): Error & { statusCode: number } {
  return Object.assign(new Error(STATUS_CODES[status] ?? String(status), cause ? { cause } : undefined), { statusCode: status });
}

function splitUrl(url: string): [string, string] {
  const q = url.indexOf('?');
  return q === -1 ? [url, ''] : [url.slice(0, q), url.slice(q)];
}

/**
 * Fastify's plugin callback.
 * @param err Why the plugin could not be registered, or nothing.
 */
export type PluginDone = (err?: Error) => void;

/**
 * The plugin: GET and HEAD on `prefix*`, and reply.sendFile.
 * @param fastify The instance it is registered on.
 * @param options Where the files are and how they are served.
 * @param done Fastify's callback, called once the routes are added.
 */
export function serveStaticPlugin(fastify: FastifyInstance, options: FastifyServeStaticOptions, done: PluginDone): void {
  if (options === null || typeof options !== 'object') throw invalidArgType('options', 'of type object', options, serveStaticPlugin);
  const { root, prefix: givenPrefix = '/', decorateReply = true, setHeaders, ...rest } = options;
  if (typeof givenPrefix !== 'string' || !givenPrefix.startsWith('/')) {
    throw invalidArgValue('options.prefix', givenPrefix, "must be a string that starts with '/'", serveStaticPlugin);
  }
  if (setHeaders !== undefined && typeof setHeaders !== 'function') throw invalidArgType('options.setHeaders', 'of type function', setHeaders, serveStaticPlugin);
  const prefix = givenPrefix.endsWith('/') ? givenPrefix : `${givenPrefix}/`;
  const site = new StaticSite(root, rest, serveStaticPlugin);
  fastify.addHook('onClose', (_instance, closed) => {
    site.close();
    closed();
  });

  const fileHeaders = (reply: FastifyReply, status: number, headers: string[], entry: FileEntry) => {
    reply.code(status);
    if (setHeaders !== undefined) {
      const [file, stats] = site.describe(entry);
      setHeaders(reply, file, stats);
      for (let i = 0; i < headers.length; i += 2) {
        const name = headers[i];
        if (name === 'content-length' || name === 'content-range' || name === 'content-encoding' || !reply.hasHeader(name)) reply.header(name, headers[i + 1]);
      }
    } else {
      reply.headers(headerObject(headers));
    }
  };

  const deliver = (request: FastifyRequest, reply: FastifyReply, decide: () => Decision | Promise<Decision>, rawPath: string, attempt: number): FastifyReply | Promise<FastifyReply> => {
    const d = decide();
    // Decided on the thread pool (a cold name, a server's mount).
    if (d instanceof Promise) return d.then((later) => respond(request, reply, decide, rawPath, attempt, later));
    return respond(request, reply, decide, rawPath, attempt, d);
  };

  const respond = (request: FastifyRequest, reply: FastifyReply, decide: () => Decision | Promise<Decision>, rawPath: string, attempt: number, d: Decision): FastifyReply | Promise<FastifyReply> => {
    switch (d.kind) {
      case 'error':
        if (d.status === 404 && d.fallThrough) return reply.callNotFound() as unknown as FastifyReply;
        if (d.headers !== undefined) reply.headers(headerObject(d.headers));
        if (d.status === 412 || d.status === 416) return reply.code(d.status).send();
        return reply.code(d.status).send(statusError(d.status, d.cause));
      case 'redirect': {
        const [pathname, search] = splitUrl(rawPath);
        // Set by hand: reply.redirect's argument order differs between Fastify 4 and 5.
        return reply.code(301).header('location', redirectTarget(pathname + '/', search)).send();
      }
      case 'not-modified':
        fileHeaders(reply, 304, d.headers, d.entry);
        return reply.send();
      case 'file':
        break;
    }
    const { entry, status, start, end, headers } = d;
    const head = request.raw.method === 'HEAD';
    if (head || end < start) {
      fileHeaders(reply, status, headers, entry);
      return reply.send(head ? undefined : Buffer.alloc(0));
    }
    if (entry.body !== null) {
      fileHeaders(reply, status, headers, entry);
      return reply.send(status === 200 ? entry.body : entry.body.subarray(start, end + 1));
    }
    const retry = () => {
      if (attempt + 1 < kAttempts) return deliver(request, reply, decide, rawPath, attempt + 1);
      return reply.code(500).send(statusError(500, new Error(`'${entry.rel}' kept changing while it was read`)));
    };
    if (entry.size < site.streamFrom) {
      return site.readWhole(entry).then((body) => {
        if (body === 'changed') return retry();
        fileHeaders(reply, status, headers, entry);
        return reply.send(status === 200 ? body : body.subarray(start, end + 1));
      });
    }
    return site.openStream(entry, start, end).then((stream) => {
      if (stream === 'changed') return retry();
      fileHeaders(reply, status, headers, entry);
      return reply.send(stream);
    });
  };

  fastify.route({
    method: ['GET', 'HEAD'],
    url: `${prefix}*`,
    handler(request, reply) {
      const url = request.raw.url ?? '/';
      // The route matched the prefix as the client spelt it; anything else is not ours.
      if (!url.startsWith(prefix)) return reply.callNotFound();
      const below = url.slice(prefix.length - 1);
      return deliver(request, reply, () => site.decide(request.raw.method, below, request.headers), url, 0);
    },
  });

  if (decorateReply) {
    fastify.decorateReply('sendFile', function sendFile(this: FastifyReply, path: string) {
      if (typeof path !== 'string') throw invalidArgType('path', 'of type string', path, sendFile);
      const request = this.request;
      // A path of the server's choosing, encoded as a URL path would be.
      const url = '/' + path.split('/').map(encodeURIComponent).join('/');
      const sent = deliver(request, this, () => site.decide(request.raw.method === 'HEAD' ? 'HEAD' : 'GET', url, request.headers), request.raw.url ?? url, 0);
      // Nobody awaits what sendFile started: a failure on the way is this reply's 500.
      if (sent instanceof Promise) sent.catch((err: Error) => this.code(500).send(statusError(500, err)));
      return this;
    });
  }
  done();
}

// Registered without encapsulation (as fastify-plugin marks it), so that reply.sendFile is seen
// by the routes of the instance that registered the plugin.
Object.assign(serveStaticPlugin, {
  [Symbol.for('skip-override')]: true,
  [Symbol.for('fastify.display-name')]: 'smartread-serve-static',
  [Symbol.for('plugin-meta')]: { name: 'smartread-serve-static', fastify: '5.x' },
});

export default serveStaticPlugin;
