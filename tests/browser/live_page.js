'use strict';
/* The live attention page (qkv attn --html OUT --live) in headless Chromium,
 * driven over the DevTools protocol on a pipe (--remote-debugging-pipe: no
 * port, no extra package; node runs this test only, the page needs nothing):
 * open the page from file://, wait for its module, read its self-check; type a
 * new text into it and compare every recomputed weight with `qkv attn` run
 * natively on that text; time the recomputation; press "generate" and compare
 * with `qkv sample` for the same seed, temperature and top-k.
 *
 *   node live_page.js gpt CHROMIUM QKV CKPT PAGE TEXT SEEDS TOKENS TEMP TOPK
 *   node live_page.js shot CHROMIUM QKV CKPT PAGE TEXT OUT.png
 *       type TEXT, then a 1200x760 screenshot of the page into OUT.png.
 *   node live_page.js seq2seq CHROMIUM QKV CKPT PAGE INPUT OUTPUT
 *       the encoder-decoder: type INPUT (compared with the program's page
 *       for it), then OUTPUT as the decoder's reading (the page's self-check
 *       on what it recomputed).
 *
 * Prints one JSON object of what it measured; exits 1 when a check fails. */
const {spawn, execFileSync} = require('child_process');
const fs = require('fs');
const path = require('path');
const os = require('os');

const [mode, chromium, qkv, ckpt, page, text, ...rest] = process.argv.slice(2);
const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'qkv_live_profile_'));
const browser = spawn(chromium, ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
  '--remote-debugging-pipe', '--user-data-dir=' + profile, 'file://' + path.resolve(page)],
  {stdio: ['ignore', 'ignore', 'ignore', 'pipe', 'pipe']});
const toBrowser = browser.stdio[3], fromBrowser = browser.stdio[4];

/* Protocol messages: JSON, each ended by a NUL byte. */
let nextId = 1, pending = new Map(), buffered = '';
fromBrowser.on('data', (chunk) => {
  buffered += chunk.toString('utf8');
  let end;
  while ((end = buffered.indexOf('\0')) >= 0) {
    const msg = JSON.parse(buffered.slice(0, end));
    buffered = buffered.slice(end + 1);
    const p = msg.id && pending.get(msg.id);
    if (p) {
      pending.delete(msg.id);
      msg.error ? p.reject(new Error(JSON.stringify(msg.error))) : p.resolve(msg.result);
    }
  }
});
function send(method, params, sessionId) {
  const id = nextId++;
  toBrowser.write(JSON.stringify({id, method, params: params || {}, sessionId}) + '\0');
  return new Promise((resolve, reject) => pending.set(id, {resolve, reject}));
}

let session;
async function evaluate(expr) {
  const r = await send('Runtime.evaluate', {expression: expr, returnByValue: true}, session);
  if (r.exceptionDetails) throw new Error('page: ' + JSON.stringify(r.exceptionDetails));
  return r.result.value;
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function waitFor(expr, what) {
  for (let i = 0; i < 600; i++) {
    if (await evaluate(expr)) return;
    await sleep(100);
  }
  throw new Error('timed out waiting for ' + what);
}

/* The data block of the page `qkv attn ARGS --html` writes. */
function nativeData(args) {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'qkv_live_native_'));
  execFileSync(qkv, ['attn', '--ckpt', ckpt, ...args, '--html', tmp + '/native.html', '--live'], {stdio: 'ignore'});
  const html = fs.readFileSync(tmp + '/native.html', 'utf8');
  fs.rmSync(tmp, {recursive: true});
  const start = html.indexOf('id="qkv-data">') + 'id="qkv-data">'.length;
  return JSON.parse(html.slice(start, html.indexOf('</script>', start)));
}

/* Type text into the page's field id: select what is there and insert, as a keyboard would. */
async function type(id, text) {
  await evaluate(`(() => { const t = document.getElementById('${id}'); t.focus(); t.select(); })()`);
  await send('Input.insertText', {text}, session);
}

/* The largest difference between the weights of two page datas, and how many. */
function weightDiff(a, b) {
  let worst = 0, n = 0;
  a.views.forEach((v, k) => v.data.forEach((L, l) => L.w.forEach((w, i) => {
    worst = Math.max(worst, Math.abs(w - b.views[k].data[l].w[i]));
    n++;
  })));
  return {worst, n};
}

/* The encoder-decoder: a typed input against the program's, then an edited output. */
async function seq2seq(result, fails) {
  const [output] = rest;
  await type('live-input', text);
  const live = await evaluate('window.qkvPage.data()'), native = nativeData(['--input', text]);
  const d = weightDiff(live, native);
  result.typed = {input: live.text, output: live.output, native_output: native.output, weights: d.n, worst: d.worst};
  if (live.text !== text || live.output !== native.output) fails.push('the page did not decode the typed input as the program does');
  if (!(d.worst <= 1e-5)) fails.push('a recomputed weight differs from the native one by ' + d.worst);
  await type('live-output', output);
  const edited = await evaluate('window.qkvPage.data()');
  result.edited = {output: edited.output, Tq: edited.views[1].Tq, check: await evaluate('window.qkvPage.check()'),
                   self_check: await evaluate("document.getElementById('self-check').textContent")};
  if (edited.output !== output || edited.views[1].Tq !== output.length + 1) fails.push('the page did not read the typed output');
  if (!result.edited.check) fails.push('after the output edit: ' + result.edited.self_check);
}

async function main() {
  const result = {};
  let targets;
  for (let i = 0; i < 100; i++) {
    targets = (await send('Target.getTargets')).targetInfos.filter((t) => t.type === 'page');
    if (targets.length) break;
    await sleep(100);
  }
  session = (await send('Target.attachToTarget', {targetId: targets[0].targetId, flatten: true})).sessionId;
  await waitFor("document.body && ['ready', 'failed'].includes(document.body.dataset.live)", 'the module');
  result.opening = await evaluate("document.getElementById('self-check').textContent");
  result.live = await evaluate('document.body.dataset.live');
  result.worst = await evaluate('window.qkvPage.worst()');
  const fails = [];
  if (!result.opening.startsWith('self-check: pass')) fails.push('the opening self-check did not pass');
  if (result.live !== 'ready') fails.push('the module did not start');
  if (!fails.length && mode === 'shot') {
    await send('Emulation.setDeviceMetricsOverride', {width: 1200, height: 760, deviceScaleFactor: 1, mobile: false}, session);
    await type('live-text', text);
    await evaluate("document.getElementById('next').scrollIntoView(false)");
    const shot = await send('Page.captureScreenshot', {format: 'png', captureBeyondViewport: false}, session);
    fs.writeFileSync(rest[0], Buffer.from(shot.data, 'base64'));
  } else if (!fails.length && mode === 'seq2seq') {
    await seq2seq(result, fails);
  } else if (!fails.length) {
    const [seeds, tokens, temp, topk] = rest;
    await type('live-text', text);
    const live = await evaluate('window.qkvPage.data()'), native = nativeData(['--text', text]);
    /* Every weight of the typed text, and the one of the last query to the first key in the last layer. */
    const {worst, n} = weightDiff(live, native);
    const v = live.views[0], last = v.data[v.layers - 1].w, i = (v.Tq - 1) * v.Tk;
    result.typed = {text: live.text, Tq: v.Tq, weights: n, worst, one: [last[i], native.views[0].data[v.layers - 1].w[i]]};
    if (live.text !== text || v.Tq !== text.length) fails.push('the page did not recompute for the typed text');
    if (!(worst <= 1e-5)) fails.push('a recomputed weight differs from the native one by ' + worst);
    result.edited = await evaluate("document.getElementById('live-status').textContent");
    /* The recomputation's time: the page's own figure for each of 11 edits, their median. */
    const times = [];
    for (let k = 0; k < 12; k++) {
      await type('live-text', k % 2 ? text : text.slice(0, -1));
      if (k) times.push(await evaluate('window.qkvPage.recomputeMs()'));
    }
    times.sort((a, b) => a - b);
    result.recompute_ms = {median: times[5], min: times[0], max: times[10], T: text.length};
    /* Generate from each seed, and compare with qkv sample. */
    result.sampling = [];
    for (const seed of seeds.split(',')) {
      await evaluate(`(() => { const $ = (id) => document.getElementById(id); $('gen-seed').value = ${+seed};
        $('gen-n').value = ${+tokens}; $('temp').value = ${+temp}; $('topk').value = ${+topk};
        $('gen-btn').click(); })()`);
      const got = await evaluate("document.getElementById('gen-out').textContent");
      const want = execFileSync(qkv, ['sample', '--ckpt', ckpt, '--prompt', text, '--seed', seed, '--tokens', tokens,
                                      '--temperature', temp, '--top-k', topk, '--threads', '1'],
                                {stdio: ['ignore', 'pipe', 'ignore']}).toString().slice(text.length, -1);
      let same = 0;
      while (same < want.length && got[same] === want[same]) same++;
      result.sampling.push({seed: +seed, tokens: want.length, same});
    }
    const first = result.sampling[0];
    if (first.same !== first.tokens) fails.push('seed ' + first.seed + ': the page and qkv sample part after ' + first.same + ' tokens');
    result.generated = (await evaluate("document.getElementById('gen-out').textContent")).slice(0, 80);
  }
  result.fails = fails;
  console.log(JSON.stringify(result));
  return fails.length ? 1 : 0;
}

/* Close the browser, then remove its profile (what its last helper
 * processes still write there is left to the caller's TMPDIR: live_page.sh
 * removes its own). */
function finish(rc) {
  browser.on('exit', () => {
    try {
      fs.rmSync(profile, {recursive: true, force: true, maxRetries: 5, retryDelay: 100});
    } catch (e) { /* left in TMPDIR */ }
    process.exit(rc);
  });
  browser.kill();
}
main().then(finish, (e) => { console.log(JSON.stringify({error: String(e)})); finish(1); });
