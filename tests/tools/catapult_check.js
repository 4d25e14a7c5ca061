// Loads a trace with the catapult trace viewer's importer (the code
// behind chrome://tracing), run in node from catapult's sources, and
// prints what it made of it as one JSON line:
//
//   {"warnings": {TYPE: COUNT}, "flows": bound arrows,
//    "misbound": arrows whose start or end slice lacks the flow's id as
//    its "correlation", "flowPoints": the file's "s" events,
//    "sfEvents": the file's "X" events with "sf",
//    "framed": slices the importer gave a stack frame,
//    "unnamed": those frames without a title}
//
// usage: node catapult_check.js CATAPULT_DIR TRACE
'use strict';
const fs = require('fs');
const path = require('path');

const cat = process.argv[2];
const trace = process.argv[3];
require(path.join(cat, 'catapult_build', 'node_bootstrap.js'));
const tp = path.join(cat, 'tracing', 'third_party');
// The source paths of catapult's tracing project (tracing_project.py).
HTMLImportsLoader.addArrayToSourcePath([
  cat, path.join(cat, 'tracing'), tp, path.join(tp, 'd3'),
  path.join(cat, 'third_party', 'polymer'), path.join(tp, 'jszip'),
  path.join(tp, 'pako'), path.join(tp, 'oboe'),
  path.join(tp, 'gl-matrix', 'dist'), path.join(tp, 'mannwhitneyu'),
  path.join(tp, 'jpeg-js'), path.join(cat, 'third_party', 'vinn'),
]);
HTMLImportsLoader.loadHTML('/tracing/importer/import.html');
HTMLImportsLoader.loadHTML('/tracing/extras/importer/trace_event_importer.html');

const text = fs.readFileSync(trace, 'utf8');
const model = new tr.Model();
new tr.importer.Import(model, new tr.importer.ImportOptions())
    .importTraces([text]);

const out = {warnings: {}, flows: model.flowEvents.length, misbound: 0};
for (const w of model.importWarnings) {
  out.warnings[w.type] = (out.warnings[w.type] || 0) + 1;
}
for (const f of model.flowEvents) {
  const a = (f.startSlice && f.startSlice.args) || {};
  const b = (f.endSlice && f.endSlice.args) || {};
  if (String(a.correlation) !== String(f.id) ||
      String(b.correlation) !== String(f.id)) {
    out.misbound++;
  }
}
const evs = JSON.parse(text).traceEvents;
out.flowPoints = evs.filter(e => e.ph === 's').length;
out.sfEvents = evs.filter(e => e.ph === 'X' && e.sf !== undefined).length;
out.framed = 0;
out.unnamed = 0;
for (const t of model.getAllThreads()) {
  for (const s of t.sliceGroup.slices) {
    if (s.startStackFrame) {
      out.framed++;
      if (!s.startStackFrame.title) out.unnamed++;
    }
  }
}
console.log(JSON.stringify(out));
