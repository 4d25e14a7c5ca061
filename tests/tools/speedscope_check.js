// Imports a trace with speedscope's importer (importProfileGroupFromText,
// speedscope's own entry for a dropped file), bundled for node from its
// sources (docs/tests.md), and prints one JSON line:
//   {"profiles": N, "names": [each profile's name], "weight": total,
//    "warnings": the importer's console warnings}
// usage: node speedscope_check.js IMPORT_JS TRACE
'use strict';
const fs = require('fs');
// The bundle decodes its wasm with an API newer than node 20's.
if (!Uint8Array.fromBase64) {
  Uint8Array.fromBase64 = (s) => new Uint8Array(Buffer.from(s, 'base64'));
}
const warnings = [];
console.warn = (...a) => warnings.push(a.join(' '));
console.log = ((log) => (...a) => {
  if (typeof a[0] === 'string' && a[0].startsWith('{')) log(...a);
})(console.log);
const {importProfileGroupFromText} = require(process.argv[2]);
const text = fs.readFileSync(process.argv[3], 'utf8');
importProfileGroupFromText('trace.json', text).then((g) => {
  const ps = g ? g.profiles : [];
  console.log(JSON.stringify({
    profiles: ps.length,
    names: ps.map((p) => p.getName()),
    weight: ps.reduce((s, p) => s + p.getTotalWeight(), 0),
    warnings: warnings,
  }));
});
