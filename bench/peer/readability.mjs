// Peer run: readability.js 0.6.0 + jsdom 26.1.0 + turndown over one of the
// shared bench sets, in one process. Prints one JSON line:
// {"pages":N,"html_bytes":B,"seconds":S,"mb_per_s":X}. Optionally writes
// <out>/<id>.md for scoring. SET is the bench folder under SHARED_DIR/bench
// (extraction, the default, or wcxb-dev).
// Usage: node readability.mjs SHARED_DIR [OUT_DIR] [ROUNDS] [SET]
// With RESUME=1 (one round, OUT_DIR given) pages that already have an output
// file are skipped, and each page's file is created empty before it is
// converted: a run that dies (jsdom can exhaust the heap on a big page) is
// resumed by running it again, and the page it died on scores as empty.
// FROM and TO (environment, page indexes in id order, TO exclusive) limit a
// run to a slice of the set: bench/compare.sh runs wcxb-dev in slices, one
// process each, because jsdom's heap grows past 3 GB over its 783 pages
// in one process; each slice's seconds cover its conversions only.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { JSDOM, VirtualConsole } from 'jsdom';
import { Readability } from '@mozilla/readability';
import TurndownService from 'turndown';

const shared = process.argv[2];
const out = process.argv[3] || '';
const rounds = Number(process.argv[4] || 1);
const set = process.argv[5] || 'extraction';
const resume = process.env.RESUME === '1' && out && rounds === 1;
const gtPath = path.join(shared, 'bench', set, 'ground-truth.json');
const gt = JSON.parse(fs.readFileSync(gtPath, 'utf8'));
const load = (id) => zlib.gunzipSync(fs.readFileSync(path.join(shared, 'bench', set, 'html', id + '.html.gz'))).toString('utf8');
// Throughput runs keep the pages in memory (reading is not timed); resumed
// scoring runs read each page when it is converted.
const all = Object.keys(gt).sort();
const ids = all.slice(Number(process.env.FROM || 0), process.env.TO ? Number(process.env.TO) : all.length);
const pages = ids.map((id) => ({ id, url: gt[id].url, html: resume ? null : load(id) }));
if (out) fs.mkdirSync(out, { recursive: true });
const td = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced' });
const vc = new VirtualConsole();
let bytes = 0;
let n = 0;
const t0 = process.hrtime.bigint();
for (let r = 0; r < rounds; r++) {
  for (const p of pages) {
    const file = out ? path.join(out, p.id + '.md') : '';
    if (resume) {
      if (fs.existsSync(file)) continue;
      fs.writeFileSync(file, '');
    }
    const html = p.html ?? load(p.id);
    bytes += Buffer.byteLength(html);
    n++;
    let md = '';
    try {
      const dom = new JSDOM(html, { url: p.url, virtualConsole: vc });
      const art = new Readability(dom.window.document).parse();
      md = art && art.content ? td.turndown(art.content) : '';
      dom.window.close();
    } catch (e) { md = ''; }
    if (out && r === 0) fs.writeFileSync(file, md);
  }
}
const secs = Number(process.hrtime.bigint() - t0) / 1e9;
console.log(JSON.stringify({ pages: n, html_bytes: bytes, seconds: secs, mb_per_s: bytes / 1e6 / secs }));
