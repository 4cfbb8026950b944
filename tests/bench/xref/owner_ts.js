// owner_ts.js - the reference for qualified xref on TypeScript (owner_cmp.py
// --ts): type-checks the .ts files under each ROOT with the TypeScript
// compiler's own API (Debian's node-typescript) and prints one JSON object:
// every property access `x.f` in the files under DIR whose property is a
// field of a class (a property declaration or a constructor's parameter
// property), with that class's name, and every (class, field) declared in
// DIR. Columns are UTF-16 units from 1; owner_cmp.py makes them bytes.
//
// Usage: NODE_PATH=/usr/share/nodejs node owner_ts.js DIR [ROOT...]
//        (ROOTs: more source folders the program needs, e.g. the ones whose
//        namespaces DIR's files extend; DIR alone when none)
"use strict";
const ts = require("typescript");
const fs = require("fs");
const path = require("path");

function walk(dir, out) {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) walk(p, out);
    else if (e.name.endsWith(".ts") && !e.name.endsWith(".d.ts")) out.push(p);
  }
  return out;
}

const dir = path.resolve(process.argv[2]);
const roots = process.argv.length > 3 ? process.argv.slice(3) : [dir];
const files = [...new Set(roots.flatMap((r) => walk(path.resolve(r), [])))].sort();
const program = ts.createProgram(files, {
  target: ts.ScriptTarget.ES2020, noEmit: true, noLib: false, skipLibCheck: true,
  types: [],
});
const checker = program.getTypeChecker();

function fieldOwner(decl) {
  if (ts.isPropertyDeclaration(decl) && ts.isClassLike(decl.parent))
    return decl.parent.name ? decl.parent.name.text : null;
  if (ts.isParameter(decl) && ts.isConstructorDeclaration(decl.parent) &&
      ts.getEffectiveModifierFlags(decl) & ts.ModifierFlags.ParameterPropertyModifier)
    return decl.parent.parent.name ? decl.parent.parent.name.text : null;
  return null;
}

const sites = [], declared = [];
for (const sf of program.getSourceFiles()) {
  if (!sf.fileName.startsWith(dir + path.sep)) continue;
  const rel = path.relative(dir, sf.fileName);
  const visit = (n) => {
    if (ts.isPropertyDeclaration(n) && ts.isClassLike(n.parent) && n.parent.name &&
        ts.isIdentifier(n.name))
      declared.push([n.parent.name.text, n.name.text]);
    if (ts.isParameter(n) && ts.isConstructorDeclaration(n.parent) &&
        ts.getEffectiveModifierFlags(n) & ts.ModifierFlags.ParameterPropertyModifier &&
        n.parent.parent.name && ts.isIdentifier(n.name))
      declared.push([n.parent.parent.name.text, n.name.text]);
    if (ts.isPropertyAccessExpression(n) && ts.isIdentifier(n.name)) {
      const sym = checker.getSymbolAtLocation(n.name);
      const decl = sym && sym.declarations && sym.declarations[0];
      const owner = decl && fieldOwner(decl);
      if (owner) {
        const at = n.name.getStart(sf);
        const lc = sf.getLineAndCharacterOfPosition(at);
        sites.push({ path: rel, line: lc.line + 1, col: lc.character + 1,
                     owner, name: n.name.text });
      }
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
}
process.stdout.write(JSON.stringify({ sites, declared }) + "\n");
