// The engine this process reads with: the addon when it loads, else the pure-JS engine.
import { loadNative, type Engine, type LoadReport, type NativeBinding } from './native';
import { jsEngine } from './js_engine';

const loaded = loadNative();

export const native: NativeBinding | null = loaded.binding;
export const engine: Engine = loaded.binding ?? jsEngine;
export const loadReport: LoadReport = loaded.report;
