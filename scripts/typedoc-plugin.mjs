// TypeDoc plugin for `npm run docs`: documents every public entry point that package.json's
// "exports" names (and nothing else), under the name a user imports it by, and fails the run on
// a function or method parameter without a description.
import fs from 'node:fs';
import path from 'node:path';
import { Application, Converter, ReflectionKind } from 'typedoc';

const root = path.resolve(import.meta.dirname ?? path.dirname(new URL(import.meta.url).pathname), '..');

/**
 * [import specifier, TypeScript source] for each entry of package.json's "exports": the
 * declaration file it names (dist/x.d.ts, or the ES module's dist/x.d.mts beside it) mapped
 * back to its source through tsconfig.json's outDir and rootDir. A JSON entry (package.json
 * itself) is not code; any other entry that cannot be mapped is an error, so that no export
 * goes undocumented.
 */
export function exportedEntryPoints() {
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  const { compilerOptions } = JSON.parse(fs.readFileSync(path.join(root, 'tsconfig.json'), 'utf8'));
  const outDir = path.resolve(root, compilerOptions.outDir);
  const rootDir = path.resolve(root, compilerOptions.rootDir);
  const entries = [];
  for (const [subpath, target] of Object.entries(pkg.exports)) {
    if (subpath.endsWith('.json')) continue;
    const types = target?.require?.types ?? target?.types ?? target?.import?.types;
    const relative = types === undefined ? '' : path.relative(outDir, path.resolve(root, types));
    if (relative.startsWith('..') || !/\.d\.m?ts$/.test(relative)) {
      throw new Error(`package.json exports["${subpath}"]: no declaration file under ${compilerOptions.outDir} (types: ${types})`);
    }
    const source = path.join(rootDir, relative.replace(/\.d\.m?ts$/, '.ts'));
    if (!fs.existsSync(source)) {
      throw new Error(`package.json exports["${subpath}"]: ${types} has no source at ${path.relative(root, source)}`);
    }
    entries.push([path.posix.join(pkg.name, subpath), source]);
  }
  return entries;
}

/** @param {Application} app */
export function load(app) {
  const entries = exportedEntryPoints();
  const nameOfSource = new Map(entries.map(([name, source]) => [source, name]));

  app.on(Application.EVENT_BOOTSTRAP_END, () => {
    if (!app.options.isSet('entryPoints')) app.options.setValue('entryPoints', entries.map(([, source]) => source));
  });

  // A module is named by its source file's path otherwise (index, fs_promises).
  app.converter.on(Converter.EVENT_CREATE_DECLARATION, (context, reflection) => {
    if (!reflection.kindOf(ReflectionKind.Module)) return;
    const file = context.getSymbolFromReflection(reflection)?.declarations?.[0]?.getSourceFile().fileName;
    const name = file && nameOfSource.get(path.resolve(file));
    if (name) reflection.name = name;
  });

  // TypeDoc's notDocumented check does not look at parameters.
  app.on(Application.EVENT_VALIDATE_PROJECT, (project) => {
    for (const signature of project.getReflectionsByKind(ReflectionKind.CallSignature | ReflectionKind.ConstructorSignature)) {
      // Members a class inherits from outside (Error's statics) are documented where they come from.
      if (signature.parent.inheritedFrom || signature.parent.flags.isExternal) continue;
      for (const parameter of signature.parameters ?? []) {
        if (parameter.hasComment()) continue;
        app.logger.validationWarning(`${signature.getFriendlyFullName()}: parameter ${parameter.name} is not described (@param)`);
      }
    }
  });
}
