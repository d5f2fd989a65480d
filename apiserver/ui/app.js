// miniplane's web view: one namespace, live.
//
// Everything here is read from the API the way any client reads it:
//
//   Informer          list, then watch (client-go's reflector, in a few lines):
//                     deployments, replicasets, pods, events
//   renderTree        Deployment → ReplicaSets → Pods by node (and the other owners)
//   Timeline          replicas per ReplicaSet and ready pods over simulated time
//   Journal           /debug/journal: every step the machinery took, and its cause
//   TimeControls      /debug/time: pause, resume, step, scale
//
// Objects' names and messages are always set as text (never as HTML).
// No framework and no build step: this file is served as it is written
// (apiserver/src/http/ui.rs).
'use strict';

// ---------------------------------------------------------------------------
// Talking to the API.

/** The bearer token: from `#token=…` (then kept for this tab only), if any. */
const TOKEN = takeToken();

function takeToken() {
  const found = /(?:^#|&)token=([^&]+)/.exec(location.hash);
  if (found) {
    sessionStorage.setItem('miniplane-token', decodeURIComponent(found[1]));
    // Out of the address bar (and so out of bookmarks and screenshots).
    history.replaceState(null, '', location.pathname + location.search);
  }
  return sessionStorage.getItem('miniplane-token');
}

/** fetch() with the token, if there is one. */
function api(path, options = {}) {
  const headers = { Accept: 'application/json', ...options.headers };
  if (TOKEN) headers.Authorization = `Bearer ${TOKEN}`;
  return fetch(path, { ...options, headers });
}

/** An Error for a failed response, worded from its Status when it has one. */
async function failure(resp) {
  let message = `${resp.status} ${resp.statusText}`;
  try {
    message = (await resp.json()).message || message;
  } catch {
    // not JSON: keep the status line
  }
  if (resp.status === 401) {
    message += ': open the address `miniplane up` printed (it ends in #token=…)';
  }
  const error = new Error(message);
  error.status = resp.status;
  return error;
}

/** The JSON values of a newline-delimited stream (a watch), as they come. */
async function* jsonLines(resp) {
  const reader = resp.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffered += value;
    let end;
    while ((end = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, end).trim();
      buffered = buffered.slice(end + 1);
      if (line) yield JSON.parse(line);
    }
  }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** A line in the header for what went wrong last (cleared after a while). */
function setStatus(text) {
  const status = document.getElementById('status');
  status.textContent = text;
  clearTimeout(setStatus.timer);
  setStatus.timer = setTimeout(() => (status.textContent = ''), 8000);
}

// ---------------------------------------------------------------------------
// Informers: list, then watch from the list's resourceVersion.

/**
 * One kind in one namespace, kept up to date. `objects` maps uid → object.
 * A watch that ends (its timeout) is resumed from the last resourceVersion
 * seen; an ERROR event (410 Gone: the history moved past it) or a failed
 * request lists again, as client-go's reflector does.
 *
 * With `pollEvery` (ms) it only lists, that often: a browser opens at most
 * six connections to a plain-HTTP server, and each watch holds one, so only
 * the kinds a rollout moves are watched.
 */
class Informer {
  constructor(path, onChange, pollEvery = 0) {
    this.path = path;
    this.onChange = onChange;
    this.pollEvery = pollEvery;
    this.objects = new Map();
    this.aborter = new AbortController();
    this.run();
  }

  stop() {
    this.aborter.abort();
  }

  async run() {
    let resourceVersion = null;
    while (!this.aborter.signal.aborted) {
      try {
        resourceVersion ??= await this.list();
        if (this.pollEvery) {
          await sleep(this.pollEvery);
          resourceVersion = null;
        } else {
          resourceVersion = await this.watch(resourceVersion);
        }
      } catch (error) {
        if (this.aborter.signal.aborted) return;
        setStatus(`${this.path}: ${error.message}; listing again`);
        resourceVersion = null;
        await sleep(1000);
      }
    }
  }

  async list() {
    const resp = await api(this.path, { signal: this.aborter.signal });
    if (!resp.ok) throw await failure(resp);
    const list = await resp.json();
    this.objects = new Map(list.items.map((o) => [o.metadata.uid, o]));
    this.synced = true;
    this.onChange();
    return list.metadata.resourceVersion;
  }

  async watch(resourceVersion) {
    const query = `watch=true&allowWatchBookmarks=true&resourceVersion=${resourceVersion}`;
    const resp = await api(`${this.path}?${query}`, { signal: this.aborter.signal });
    if (!resp.ok) throw await failure(resp);
    for await (const event of jsonLines(resp)) {
      if (event.type === 'ERROR') throw new Error(event.object.message);
      const object = event.object;
      resourceVersion = object.metadata.resourceVersion;
      if (event.type === 'BOOKMARK') continue;
      if (event.type === 'DELETED') this.objects.delete(object.metadata.uid);
      else this.objects.set(object.metadata.uid, object);
      this.onChange();
    }
    return resourceVersion;
  }

  get items() {
    return [...this.objects.values()];
  }
}

// ---------------------------------------------------------------------------
// Building DOM and SVG: text is always a text node.

function h(tag, props, ...children) {
  return build(document.createElement(tag), props, children);
}

const SVG = 'http://www.w3.org/2000/svg';

function svg(tag, props, ...children) {
  return build(document.createElementNS(SVG, tag), props, children);
}

function build(element, props, children) {
  for (const [key, value] of Object.entries(props || {})) {
    if (value === undefined || value === null) continue;
    if (key.startsWith('on')) element.addEventListener(key.slice(2), value);
    else element.setAttribute(key, value);
  }
  for (const child of children.flat()) {
    if (child !== null && child !== undefined && child !== false) element.append(child);
  }
  return element;
}

// ---------------------------------------------------------------------------
// Reading objects.

/** The uid of the controller that owns `object`, if any. */
function controllerUid(object) {
  const ref = (object.metadata.ownerReferences || []).find((r) => r.controller);
  return ref && ref.uid;
}

const byName = (a, b) => a.metadata.name.localeCompare(b.metadata.name);
const byCreation = (a, b) =>
  (a.metadata.creationTimestamp || '').localeCompare(b.metadata.creationTimestamp || '') || byName(a, b);

function isReady(pod) {
  return (pod.status?.conditions || []).some((c) => c.type === 'Ready' && c.status === 'True');
}

/** A pod's state as a word for its colour and a few words to read. */
function podState(pod) {
  const phase = pod.status?.phase || 'Pending';
  if (pod.metadata.deletionTimestamp) return ['terminating', `${phase} · terminating`];
  if (phase === 'Running') return isReady(pod) ? ['ready', 'Running · ready'] : ['notready', 'Running · not ready'];
  if (phase === 'Pending') {
    const waiting = (pod.status?.containerStatuses || []).map((c) => c.state?.waiting?.reason).find(Boolean);
    return ['pending', waiting ? `Pending · ${waiting}` : 'Pending'];
  }
  return [phase.toLowerCase(), phase];
}

function images(podTemplate) {
  return (podTemplate?.spec?.containers || []).map((c) => c.image).join(', ');
}

const REVISION = 'deployment.kubernetes.io/revision';

// ---------------------------------------------------------------------------
// The owner tree.

/** Clicking an object's name filters the journal by it. */
function objectName(kind, object) {
  const { namespace, name } = object.metadata;
  return h('button', { type: 'button', class: 'object', title: 'show its journal entries',
    onclick: () => journal.setFilter(`${kind} ${namespace}/${name}`) }, `${kind} ${name}`);
}

/** An owner's pods in one row per node. */
function podsByNode(pods) {
  if (pods.length === 0) return h('div', { class: 'nopods' }, 'no pods');
  const nodes = new Map();
  for (const pod of pods.sort(byName)) {
    const node = pod.spec?.nodeName || '(not scheduled)';
    nodes.set(node, [...(nodes.get(node) || []), pod]);
  }
  return h('div', { class: 'nodes' }, [...nodes.keys()].sort().map((node) =>
    h('div', { class: 'node' }, h('span', { class: 'node-name' }, node),
      nodes.get(node).map((pod) => {
        const [state, words] = podState(pod);
        return h('span', { class: `pod ${state}`, 'data-kind': 'Pod', 'data-name': pod.metadata.name,
          'data-state': state }, objectName('Pod', pod), h('em', null, words));
      }))));
}

function renderReplicaSet(rs, podsOf) {
  const revision = rs.metadata.annotations?.[REVISION];
  const ready = rs.status?.readyReplicas || 0;
  return h('li', { class: 'rs', 'data-kind': 'ReplicaSet', 'data-name': rs.metadata.name },
    h('div', { class: 'line' }, objectName('ReplicaSet', rs),
      revision && h('span', { class: 'tag' }, `revision ${revision}`),
      h('span', { class: 'counts' }, `${rs.spec.replicas ?? 1} desired / ${ready} ready`),
      h('span', { class: 'image' }, images(rs.spec.template))),
    podsByNode(podsOf(rs)));
}

function renderDeployment(deploy, replicaSets, podsOf) {
  const { spec, status = {} } = deploy;
  const desired = spec.replicas ?? 1;
  const done = (status.updatedReplicas || 0) === desired && (status.replicas || 0) === desired
    && (status.observedGeneration || 0) >= deploy.metadata.generation;
  return h('li', { class: 'root', 'data-kind': 'Deployment', 'data-name': deploy.metadata.name },
    h('div', { class: 'line' }, objectName('Deployment', deploy),
      h('span', { class: 'counts' }, `${status.readyReplicas || 0}/${desired} ready · ${status.updatedReplicas || 0} updated`),
      h('span', { class: done ? 'tag ok' : 'tag busy' }, done ? 'rolled out' : 'rolling out'),
      h('span', { class: 'image' }, images(spec.template))),
    h('ul', null, replicaSets.sort(byCreation).reverse().map((rs) => renderReplicaSet(rs, podsOf))));
}

/** A StatefulSet, DaemonSet or Job: its pods under it. */
function renderOtherRoot(kind, object, podsOf) {
  const status = object.status || {};
  const counts = {
    StatefulSet: () => `${status.readyReplicas || 0}/${object.spec.replicas ?? 1} ready`,
    DaemonSet: () => `${status.numberReady || 0}/${status.desiredNumberScheduled || 0} ready`,
    Job: () => `${status.succeeded || 0}/${object.spec.completions ?? 1} succeeded`,
  }[kind];
  return h('li', { class: 'root', 'data-kind': kind, 'data-name': object.metadata.name },
    h('div', { class: 'line' }, objectName(kind, object),
      h('span', { class: 'counts' }, counts()), h('span', { class: 'image' }, images(object.spec.template))),
    podsByNode(podsOf(object)));
}

function renderTree(model) {
  const podsByOwner = new Map();
  for (const pod of model.pods) {
    const owner = controllerUid(pod) || 'none';
    podsByOwner.set(owner, [...(podsByOwner.get(owner) || []), pod]);
  }
  const podsOf = (owner) => podsByOwner.get(owner.metadata.uid) || [];
  const deployments = new Set(model.deployments.map((d) => d.metadata.uid));
  const roots = [];
  for (const deploy of model.deployments.sort(byName)) {
    const mine = model.replicaSets.filter((rs) => controllerUid(rs) === deploy.metadata.uid);
    roots.push(renderDeployment(deploy, mine, podsOf));
  }
  for (const rs of model.replicaSets.filter((rs) => !deployments.has(controllerUid(rs))).sort(byName)) {
    roots.push(renderReplicaSet(rs, podsOf));
  }
  for (const [kind, objects] of [['StatefulSet', model.statefulSets], ['DaemonSet', model.daemonSets],
    ['Job', model.jobs]]) {
    for (const object of objects.sort(byName)) roots.push(renderOtherRoot(kind, object, podsOf));
  }
  const owned = new Set([...model.replicaSets, ...model.statefulSets, ...model.daemonSets, ...model.jobs]
    .map((o) => o.metadata.uid));
  const loose = model.pods.filter((p) => !owned.has(controllerUid(p)));
  if (loose.length > 0) {
    roots.push(h('li', { class: 'root' }, h('div', { class: 'line' }, 'Other pods'), podsByNode(loose)));
  }
  const tree = document.getElementById('tree');
  tree.replaceChildren(roots.length ? h('ul', { class: 'roots' }, roots)
    : h('p', { class: 'note' }, `no workloads in namespace ${model.namespace}`));
}

// ---------------------------------------------------------------------------
// Simulated time: /debug/time when the server has it, else the newest
// timestamp seen on an object.

const clock = {
  /** The last /debug/time answer and when (browser time) it came. */
  base: null,
  at: 0,
  /** The newest simulated time read from an object, ms since the epoch. */
  newestSeen: 0,

  now() {
    if (!this.base) return this.newestSeen;
    const elapsed = this.base.paused ? 0 : (performance.now() - this.at) * this.base.scale;
    return Date.parse(this.base.now) + elapsed;
  },

  see(timestamp) {
    const t = Date.parse(timestamp || '');
    if (t > this.newestSeen) this.newestSeen = t;
  },

  /** Every timestamp an object carries. */
  seeObject(object) {
    const m = object.metadata;
    this.see(m.creationTimestamp);
    this.see(m.deletionTimestamp);
    for (const f of m.managedFields || []) this.see(f.time);
    for (const c of object.status?.conditions || []) {
      this.see(c.lastTransitionTime);
      this.see(c.lastUpdateTime);
    }
  },
};

// ---------------------------------------------------------------------------
// The rollout timeline: one sample per change of what it plots.

/** How many line colours style.css has (`.c0` … `.c6`). */
const COLOURS = 7;

class Timeline {
  constructor() {
    this.samples = []; // {t, replicas: {rsName: n}, ready}
    this.events = [];
  }

  reset() {
    this.samples = [];
    document.getElementById('timeline').replaceChildren();
    document.getElementById('legend').replaceChildren();
  }

  /**
   * Adds a sample when the plotted numbers changed, stamped with the
   * simulated time at which the page saw the change.
   */
  sample(model) {
    this.order = model.replicaSets.sort(byCreation).map((rs) => rs.metadata.name);
    this.events = model.events;
    const replicas = {};
    for (const rs of model.replicaSets) replicas[rs.metadata.name] = rs.spec.replicas ?? 1;
    const ready = model.pods.filter((p) => isReady(p) && !p.metadata.deletionTimestamp).length;
    const last = this.samples[this.samples.length - 1];
    if (last && last.ready === ready && JSON.stringify(last.replicas) === JSON.stringify(replicas)) return;
    const t = Math.max(clock.now(), last ? last.t : 0);
    this.samples.push({ t, replicas, ready });
    if (this.samples.length > 2000) this.samples.shift();
  }

  /**
   * The time axis: from the first sample (at most ten minutes back) to now,
   * but not far past the last change, so that a rollout fills the width
   * however long the page stays open.
   */
  span() {
    const last = this.samples[this.samples.length - 1].t;
    const first = Math.max(this.samples[0].t, last - 600_000);
    const end = Math.min(Math.max(clock.now(), last), last + Math.max(10_000, (last - first) / 4));
    return [first, Math.max(end, first + 1000)];
  }

  render() {
    const box = document.getElementById('timeline');
    const legend = document.getElementById('legend');
    if (this.samples.length === 0) return;
    const [width, height, left, bottom, top] = [760, 220, 36, 34, 10];
    const [t0, t1] = this.span();
    const names = (this.order || []).filter((n) => this.samples.some((s) => n in s.replicas));
    const most = Math.max(1, ...this.samples.flatMap((s) => [s.ready, ...Object.values(s.replicas)]));
    const x = (t) => left + ((Math.max(t, t0) - t0) / (t1 - t0)) * (width - left - 8);
    const y = (n) => top + (1 - n / most) * (height - top - bottom);
    /** A step line: each value holds until the next sample (samples before t0 start it at t0). */
    const steps = (value) => {
      const points = [];
      let previous;
      for (const s of this.samples) {
        const v = value(s);
        if (s.t >= t0 && previous !== undefined) points.push(`${x(s.t)},${y(previous)}`);
        if (s.t >= t0 && v !== undefined) points.push(`${x(s.t)},${y(v)}`);
        previous = v;
      }
      if (previous !== undefined) points.push(`${x(t1)},${y(previous)}`);
      return points.join(' ');
    };
    const grid = [];
    for (let n = 0; n <= most; n += Math.max(1, Math.ceil(most / 5))) {
      grid.push(svg('line', { x1: left, x2: width - 8, y1: y(n), y2: y(n), class: 'grid' }),
        svg('text', { x: left - 6, y: y(n) + 4, class: 'axis', 'text-anchor': 'end' }, String(n)));
    }
    const seconds = (t1 - t0) / 1000;
    const tick = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 1800, 3600].find((s) => seconds / s <= 8) || 7200;
    for (let s = 0; s <= seconds; s += tick) {
      grid.push(svg('text', { x: x(t0 + s * 1000), y: height - bottom + 14, class: 'axis', 'text-anchor': 'middle' },
        `+${s}s`));
    }
    const lines = names.map((name, i) => svg('polyline', { points: steps((s) => s.replicas[name]),
      class: `rs-line c${i % COLOURS}`, 'data-name': name }, svg('title', null, name)));
    const ready = svg('polyline', { points: steps((s) => s.ready), class: 'ready-line' },
      svg('title', null, 'ready pods'));
    const marks = this.events.map((e) => [Date.parse(eventTime(e)), e]).filter(([t]) => t >= t0 && t <= t1)
      .map(([t, e]) => svg('g', { class: `event ${e.type === 'Warning' ? 'warning' : 'normal'}` },
        svg('line', { x1: x(t), x2: x(t), y1: height - bottom + 18, y2: height - 2 }),
        svg('title', null, `${e.reason}: ${e.message} (${e.involvedObject?.kind} ${e.involvedObject?.name})`)));
    box.replaceChildren(svg('svg', { viewBox: `0 0 ${width} ${height}`, role: 'img',
      'aria-label': 'replicas per ReplicaSet and ready pods over simulated time' },
      grid, lines, ready, marks));
    legend.replaceChildren(...names.map((name, i) => h('span', { class: 'key' },
      h('span', { class: `swatch c${i % COLOURS}` }), `${name} replicas`)),
      h('span', { class: 'key' }, h('span', { class: 'swatch ready' }), 'ready pods'),
      h('span', { class: 'key' }, h('span', { class: 'swatch event' }), 'events (hover for the reason)'));
  }
}

function eventTime(e) {
  return e.series?.lastObservedTime || e.lastTimestamp || e.eventTime || e.firstTimestamp
    || e.metadata.creationTimestamp;
}

// ---------------------------------------------------------------------------
// The journal: polled from /debug/journal (`after` the last id seen).

class Journal {
  constructor() {
    this.entries = new Map(); // id → entry, oldest first
    this.after = 0;
    this.filter = '';
    this.available = true;
    this.generation = 0;
    document.getElementById('filter').addEventListener('input', (e) => {
      this.filter = e.target.value;
      this.render();
    });
    document.getElementById('clear-filter').addEventListener('click', () => this.setFilter(''));
  }

  setFilter(text) {
    document.getElementById('filter').value = text;
    this.filter = text;
    this.render();
  }

  /**
   * Follows `namespace`'s entries, once a second. A server without a
   * journal (404) is asked once only: the browser logs every failed request.
   */
  async follow(namespace) {
    const generation = ++this.generation;
    this.entries = new Map();
    this.after = 0;
    this.render();
    while (generation === this.generation && this.available) {
      try {
        await this.poll(namespace, generation);
      } catch (error) {
        setStatus(`journal: ${error.message}`);
      }
      await sleep(1000);
    }
  }

  /**
   * Asks for the entries after the last page's, and the newest 100 ids
   * again: an informer event's cause is filled in when its write is
   * recorded, which can come just after the event.
   */
  async poll(namespace, generation) {
    let after = Math.max(0, this.after - 100);
    let changed = false;
    for (;;) {
      const resp = await api(`/debug/journal?after=${after}&limit=1000&namespace=${encodeURIComponent(namespace)}`);
      this.setAvailable(resp.status !== 404);
      if (resp.status === 404) return;
      if (!resp.ok) throw await failure(resp);
      const page = await resp.json();
      if (generation !== this.generation) return; // another namespace's by now
      for (const entry of page.entries) {
        const known = this.entries.get(entry.id);
        if (known && JSON.stringify(known) === JSON.stringify(entry)) continue;
        this.entries.set(entry.id, entry);
        changed = true;
      }
      after = page.next;
      if (page.entries.length < 1000) break;
    }
    this.after = Math.max(this.after, after);
    this.trim();
    if (changed) this.render();
  }

  trim() {
    const ids = [...this.entries.keys()];
    for (const id of ids.slice(0, Math.max(0, ids.length - 2000))) this.entries.delete(id);
  }

  setAvailable(available) {
    this.available = available;
    document.getElementById('journal-note').textContent = available ? ''
      : 'journal unavailable: this server has no /debug/journal';
  }

  /** Whether every word of the filter is in "Kind namespace/name". */
  matches(entry) {
    const words = this.filter.toLowerCase().split(/\s+/).filter(Boolean);
    if (words.length === 0) return true;
    const o = entry.object;
    const text = o ? `${o.kind} ${o.namespace || ''}/${o.name}`.toLowerCase() : '';
    return words.every((w) => text.includes(w));
  }

  render() {
    // The newest 300, and back to the highlighted cause if it is older.
    const matching = [...this.entries.values()].filter((e) => this.matches(e));
    const cause = matching.findIndex((e) => e.id === this.highlighted);
    const from = Math.max(0, matching.length - 300);
    const shown = matching.slice(cause >= 0 ? Math.min(cause, from) : from).reverse();
    const rows = shown.map((e) => {
      const o = e.object;
      const highlight = e.id === this.highlighted ? ' highlight' : '';
      return h('tr', { id: `entry-${e.id}`, class: `step-${e.step}${highlight}` },
        h('td', { class: 'id' }, `#${e.id}`),
        h('td', { class: 'when' }, (e.time || '').slice(11, 23)),
        h('td', null, e.step),
        h('td', null, e.actor),
        h('td', null, o ? h('button', { type: 'button', class: 'object', onclick: () => this.setFilter(
          `${o.kind} ${o.namespace || ''}/${o.name}`) }, `${o.kind} ${o.name}`) : ''),
        h('td', { class: 'message' }, [e.verb, e.message].filter(Boolean).join(' '),
          e.function ? h('span', { class: 'function' }, ` (${e.function})`) : null),
        h('td', null, e.cause ? h('button', { type: 'button', class: 'cause', 'data-cause': e.cause,
          onclick: () => this.showCause(e.cause) }, `← #${e.cause}`) : ''));
    });
    document.querySelector('#journal tbody').replaceChildren(...rows);
  }

  /** Highlights the entry `id` (fetched if it is not here, unfiltered if it is hidden). */
  async showCause(id) {
    if (!this.entries.has(id)) {
      const resp = await api(`/debug/journal?after=${id - 1}&limit=1`);
      const page = resp.ok ? await resp.json() : { entries: [] };
      const found = page.entries.find((e) => e.id === id);
      if (!found) {
        setStatus(`entry #${id} is no longer in the journal`);
        return;
      }
      this.entries = new Map([...this.entries, [id, found]].sort(([a], [b]) => a - b));
    }
    this.highlighted = id;
    if (!this.matches(this.entries.get(id))) this.setFilter('');
    else this.render();
    const row = document.getElementById(`entry-${id}`);
    // Scrolls the journal's box only (scrollIntoView would move the page too).
    const box = document.getElementById('journal-box');
    if (row) box.scrollTop += row.getBoundingClientRect().top - box.getBoundingClientRect().top - box.clientHeight / 2;
    clearTimeout(this.unhighlight);
    this.unhighlight = setTimeout(() => {
      this.highlighted = null;
      this.render();
    }, 4000);
  }
}

// ---------------------------------------------------------------------------
// The time machine's controls.

class TimeControls {
  constructor() {
    const post = (path) => () => this.post(path);
    document.getElementById('pause').addEventListener('click', post('/debug/time/pause'));
    document.getElementById('resume').addEventListener('click', post('/debug/time/resume'));
    document.getElementById('step1').addEventListener('click', post('/debug/time/step?duration=1s'));
    document.getElementById('step10').addEventListener('click', post('/debug/time/step?duration=10s'));
    document.getElementById('set-scale').addEventListener('click', () => {
      const factor = document.getElementById('scale').value;
      this.post(`/debug/time/scale?factor=${encodeURIComponent(factor)}`);
    });
  }

  /** Polls the state once a second; a server without it (404) is asked once. */
  async follow() {
    while (!this.missing) {
      try {
        await this.refresh();
      } catch (error) {
        setStatus(`time: ${error.message}`);
      }
      await sleep(1000);
    }
  }

  async refresh() {
    const resp = await api('/debug/time');
    this.missing = resp.status === 404;
    if (this.missing) return this.show(null);
    if (!resp.ok) throw await failure(resp);
    this.show(await resp.json());
  }

  /** One request at a time: a step answers only once it is done. */
  async post(path) {
    this.busy = true;
    this.enable(null);
    try {
      const resp = await api(path, { method: 'POST' });
      if (!resp.ok) setStatus(`${path}: ${(await failure(resp)).message}`);
    } finally {
      this.busy = false;
      await this.refresh();
    }
  }

  /** Which controls make sense now: steps move a paused clock only. */
  enable(time) {
    const usable = Boolean(time) && !this.busy;
    const paused = usable && time.paused;
    document.getElementById('pause').disabled = !usable || paused;
    document.getElementById('resume').disabled = !paused;
    document.getElementById('step1').disabled = !paused;
    document.getElementById('step10').disabled = !paused;
    document.getElementById('scale').disabled = !usable;
    document.getElementById('set-scale').disabled = !usable;
  }

  show(time) {
    clock.base = time;
    clock.at = performance.now();
    this.enable(time);
    const now = document.getElementById('now');
    if (!time) {
      now.textContent = 'time controls unavailable';
      return;
    }
    const held = (time.held || []).length;
    const hms = new Date(Date.parse(time.now)).toISOString().slice(11, 23);
    now.textContent = `now ${hms} · ${time.paused ? 'paused' : 'running'} · ×${time.scale}`
      + (held ? ` · ${held} held at a breakpoint` : '');
    now.className = time.paused ? 'now paused' : 'now';
    const scale = document.getElementById('scale');
    if (document.activeElement !== scale) scale.value = time.scale;
  }
}

// ---------------------------------------------------------------------------
// The page: one namespace's informers feed the tree and the timeline.

const journal = new Journal();
const timeline = new Timeline();
let informers = [];
let renderTimer = null;

function watchNamespace(namespace) {
  for (const informer of informers) informer.stop();
  timeline.reset();
  document.getElementById('tree').replaceChildren(h('p', { class: 'note' }, 'loading…'));
  const ns = encodeURIComponent(namespace);
  const kinds = {
    deployments: `/apis/apps/v1/namespaces/${ns}/deployments`,
    replicaSets: `/apis/apps/v1/namespaces/${ns}/replicasets`,
    pods: `/api/v1/namespaces/${ns}/pods`,
    events: `/api/v1/namespaces/${ns}/events`,
    statefulSets: `/apis/apps/v1/namespaces/${ns}/statefulsets`,
    daemonSets: `/apis/apps/v1/namespaces/${ns}/daemonsets`,
    jobs: `/apis/batch/v1/namespaces/${ns}/jobs`,
  };
  const watched = ['deployments', 'replicaSets', 'pods', 'events'];
  const byKind = Object.fromEntries(Object.entries(kinds).map(([kind, path]) =>
    [kind, new Informer(path, scheduleRender, watched.includes(kind) ? 0 : 5000)]));
  informers = Object.values(byKind);
  const model = () => {
    const all = Object.fromEntries(Object.entries(byKind).map(([kind, i]) => [kind, i.items]));
    return { namespace, ...all };
  };
  scheduleRender.model = model;
  journal.follow(namespace);
}

/** Renders at most every 100 ms, however many events arrive. */
function scheduleRender() {
  if (renderTimer) return;
  renderTimer = setTimeout(() => {
    renderTimer = null;
    if (!informers.every((i) => i.synced)) return; // not every kind listed yet
    const model = scheduleRender.model();
    for (const kind of ['deployments', 'replicaSets', 'pods', 'events']) {
      for (const object of model[kind]) clock.seeObject(object);
    }
    renderTree(model);
    timeline.sample(model);
    timeline.render();
  }, 100);
}

async function loadNamespaces(select) {
  const resp = await api('/api/v1/namespaces');
  if (!resp.ok) throw await failure(resp);
  const current = select.value;
  const names = [...new Set([current, ...(await resp.json()).items.map((n) => n.metadata.name)])].sort();
  const shown = [...select.options].map((o) => o.value);
  if (names.join() === shown.join()) return; // (replacing the options would close an open list)
  select.replaceChildren(...names.map((n) => h('option', { value: n }, n)));
  select.value = current;
}

function start() {
  const select = document.getElementById('namespace');
  const initial = new URLSearchParams(location.search).get('namespace') || 'default';
  select.replaceChildren(h('option', { value: initial }, initial));
  loadNamespaces(select).catch((error) => setStatus(`namespaces: ${error.message}`));
  select.addEventListener('focus', () => loadNamespaces(select).catch(() => {}));
  select.addEventListener('change', () => {
    const url = new URL(location.href);
    url.searchParams.set('namespace', select.value);
    history.replaceState(null, '', url);
    watchNamespace(select.value);
  });
  watchNamespace(initial);
  new TimeControls().follow();
  // The time axis moves on between changes too.
  setInterval(() => timeline.render(), 1000);
}

start();
