// The engine this process reads with: the addon when it loads, else the pure-JS engine.
import { loadNative, type Engine, type LoadReport, type NativeBinding } from './native';
import { jsEngine } from './js_engine';

// Small results share a slab, as Node's own small Buffers share Buffer.poolSize: a view costs
// far less than a Buffer of its own (one malloc, and one free on a sweeper thread, per read).
// As with Buffer.allocUnsafe, a small result keeps its slab alive while it lives.
const kPoolSize = 16 * 1024;
const kPooledMax = 4096;

function nativeEngine(binding: NativeBinding): Engine {
  let pool = Buffer.allocUnsafeSlow(0);
  let offset = kPoolSize;
  return {
    readFileSync(target, flags, statUserFd) {
      if (offset + kPooledMax > kPoolSize) {
        pool = Buffer.allocUnsafeSlow(kPoolSize);
        binding.setPool(pool);
        offset = 0;
      }
      const result = binding.readFileSync(target, flags, statUserFd, offset);
      if (typeof result !== 'number') return result;
      const view = Buffer.from(pool.buffer, offset, result);
      offset = (offset + result + 7) & ~7;
      return view;
    },
  };
}

const loaded = loadNative();

export const native: NativeBinding | null = loaded.binding;
export const engine: Engine = loaded.binding ? nativeEngine(loaded.binding) : jsEngine;
export const loadReport: LoadReport = loaded.report;
