// Client-matrix script for @kubernetes/client-node (see the operation list in
// the lead's protocol): every everyday operation a JavaScript program does with
// the official client, run against the cluster the kubeconfig points at.
//
// The configuration is loaded the client's normal way (KubeConfig.loadFromDefault,
// which reads $KUBECONFIG) and never edited. One "RESULT <op> PASS|FAIL <why>"
// line per operation goes to stdout, in order; everything else goes to stderr.

import { Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';

import {
    ApiException,
    ApisApi,
    AppsV1Api,
    CoreApi,
    CoreV1Api,
    KubeConfig,
    KubernetesObjectApi,
    Log,
    PatchStrategy,
    VersionApi,
    Watch,
    makeInformer,
    setHeaderOptions,
} from '@kubernetes/client-node';

const CLIENT = 'javascript';
const NS = `client-${CLIENT}`;
const WAIT_MS = 60_000;
const SCRIPT_DEADLINE_MS = 170_000;
const started = Date.now();

const kc = new KubeConfig();
kc.loadFromDefault();
const core = kc.makeApiClient(CoreV1Api);
const apps = kc.makeApiClient(AppsV1Api);
const objects = KubernetesObjectApi.makeApiClient(kc);

function log(...args) {
    console.error(...args);
}

class Check extends Error {}

function check(cond, message) {
    if (!cond) {
        throw new Check(message);
    }
}

// Deep equality where object key order does not matter (the server sorts map keys).
function canonical(v) {
    if (Array.isArray(v)) {
        return v.map(canonical);
    }
    if (v && typeof v === 'object') {
        return Object.fromEntries(Object.keys(v).sort().map((k) => [k, canonical(v[k])]));
    }
    return v;
}

function eq(a, b) {
    return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}

// The metav1.Status a failed call carried, whatever shape the client left it in.
function statusOf(err) {
    let body = err?.body;
    if (typeof body === 'string') {
        try {
            body = JSON.parse(body);
        } catch {
            return { raw: body };
        }
    }
    return body ?? {};
}

function describe(err) {
    if (err instanceof Check) {
        return err.message;
    }
    if (err instanceof ApiException) {
        const s = statusOf(err);
        return `ApiException code=${err.code} reason=${s.reason ?? '?'} message=${s.message ?? s.raw ?? '?'}`;
    }
    return `${err?.name ?? 'Error'}: ${err?.message ?? String(err)}`;
}

// Runs `body`; expects it to throw an ApiException and returns it.
async function expectApiError(body, what) {
    try {
        await body();
    } catch (err) {
        if (err instanceof ApiException) {
            return err;
        }
        throw err;
    }
    throw new Check(`${what}: expected an error, the call succeeded`);
}

// Polls `probe` until it returns a truthy value or the deadline passes.
async function waitFor(what, probe, ms = WAIT_MS) {
    const deadline = Date.now() + ms;
    let last;
    for (;;) {
        try {
            const v = await probe();
            if (v) {
                return v;
            }
        } catch (err) {
            last = err;
        }
        if (Date.now() > deadline) {
            throw new Check(`timed out after ${ms / 1000}s waiting for ${what}${last ? ` (last error: ${describe(last)})` : ''}`);
        }
        await sleep(250);
    }
}

async function isGone(read) {
    try {
        await read();
        return false;
    } catch (err) {
        if (err instanceof ApiException && err.code === 404) {
            return true;
        }
        throw err;
    }
}

const OPERATIONS = [
    'create', 'get', 'list', 'replace', 'label_selector', 'field_selector', 'limit_continue',
    'merge_patch', 'strategic_patch', 'json_patch', 'apply_twice', 'apply_conflict', 'apply_force',
    'scale', 'watch_from_rv', 'watch_helper', 'pod_logs', 'foreground_delete', 'status_404',
    'status_409', 'status_422', 'discovery', 'dynamic_client', 'custom_resource',
];
const reported = new Set();
let failures = 0;

const OP_DEADLINE_MS = 80_000;

function result(name, outcome) {
    reported.add(name);
    console.log(`RESULT ${name} ${outcome}`);
}

// One operation: PASS, or FAIL with the reason. A call that never answers (no
// response headers, say) fails the operation after OP_DEADLINE_MS instead of
// hanging the script.
async function op(name, body) {
    let timer;
    try {
        if (Date.now() - started > SCRIPT_DEADLINE_MS) {
            throw new Check('script deadline reached before this operation');
        }
        const deadline = new Promise((_, reject) => {
            timer = setTimeout(() => reject(new Check(`operation did not finish within ${OP_DEADLINE_MS / 1000}s`)), OP_DEADLINE_MS);
        });
        await Promise.race([body(), deadline]);
        result(name, 'PASS');
    } catch (err) {
        failures += 1;
        log(`${name} failed:`, err);
        result(name, `FAIL ${describe(err).replace(/\s+/g, ' ').trim()}`);
    } finally {
        clearTimeout(timer);
    }
}

// The whole run is bounded too: whatever is still unreported then fails.
setTimeout(() => {
    for (const name of OPERATIONS.filter((n) => !reported.has(n))) {
        console.log(`RESULT ${name} FAIL the script ran out of time (${SCRIPT_DEADLINE_MS / 1000}s) before this operation`);
    }
    process.exit(1);
}, SCRIPT_DEADLINE_MS + 5_000).unref();

function configMap(name, data, labels) {
    return {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name, namespace: NS, ...(labels ? { labels } : {}) },
        data,
    };
}

const busybox = (name) => ({ name, image: 'busybox', command: ['sh', '-c', 'echo hello; sleep 3600'] });

function deployment(name, replicas, containers) {
    return {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name, namespace: NS },
        spec: {
            replicas,
            selector: { matchLabels: { app: name } },
            template: {
                metadata: { labels: { app: name } },
                spec: { terminationGracePeriodSeconds: 1, containers },
            },
        },
    };
}

// The namespace from a previous run is deleted and waited for; then a fresh one.
async function freshNamespace() {
    try {
        await core.deleteNamespace({ name: NS });
        log(`deleted leftover namespace ${NS}; waiting for it to go`);
    } catch (err) {
        if (!(err instanceof ApiException && err.code === 404)) {
            throw err;
        }
    }
    await waitFor(`namespace ${NS} to be gone`, () => isGone(() => core.readNamespace({ name: NS })));
    await core.createNamespace({ body: { metadata: { name: NS } } });
}

async function main() {
    await freshNamespace();

    let read;
    await op('create', async () => {
        const created = await core.createNamespacedConfigMap({
            namespace: NS,
            body: configMap('cm-one', { a: '1', b: 'two' }),
        });
        check(created.metadata?.uid, 'created ConfigMap has no uid');
        check(created.metadata?.resourceVersion, 'created ConfigMap has no resourceVersion');
    });

    await op('get', async () => {
        read = await core.readNamespacedConfigMap({ name: 'cm-one', namespace: NS });
        check(eq(read.data, { a: '1', b: 'two' }), `data is ${JSON.stringify(read.data)}, want {"a":"1","b":"two"}`);
    });

    await op('list', async () => {
        const list = await core.listNamespacedConfigMap({ namespace: NS });
        const names = list.items.map((i) => i.metadata.name);
        check(names.includes('cm-one'), `list names ${JSON.stringify(names)} lack cm-one`);
        check(list.metadata?.resourceVersion, 'list has no metadata.resourceVersion');
    });

    await op('replace', async () => {
        read = read ?? (await core.readNamespacedConfigMap({ name: 'cm-one', namespace: NS }));
        const staleRv = read.metadata.resourceVersion;
        const body = structuredClone(read);
        body.data = { a: '1', b: 'three' };
        const replaced = await core.replaceNamespacedConfigMap({ name: 'cm-one', namespace: NS, body });
        check(eq(replaced.data, { a: '1', b: 'three' }), `PUT answered data ${JSON.stringify(replaced.data)}`);
        check(replaced.metadata.resourceVersion !== staleRv, 'resourceVersion did not change on PUT');
        const back = await core.readNamespacedConfigMap({ name: 'cm-one', namespace: NS });
        check(back.data?.b === 'three', `read back b=${back.data?.b}, want three`);

        const stale = structuredClone(read);
        stale.data = { a: 'stale' };
        const err = await expectApiError(
            () => core.replaceNamespacedConfigMap({ name: 'cm-one', namespace: NS, body: stale }),
            'PUT with stale resourceVersion',
        );
        const s = statusOf(err);
        check(err.code === 409, `stale PUT answered ${err.code}, want 409`);
        check(s.reason === 'Conflict', `stale PUT reason ${s.reason}, want Conflict`);
    });

    await op('label_selector', async () => {
        for (const [name, app] of [['sel-x', 'x'], ['sel-y', 'y'], ['sel-none', undefined]]) {
            await core.createNamespacedConfigMap({
                namespace: NS,
                body: configMap(name, { k: 'v' }, app ? { app } : { other: 'z' }),
            });
        }
        const names = async (labelSelector) =>
            (await core.listNamespacedConfigMap({ namespace: NS, labelSelector })).items.map((i) => i.metadata.name).sort();
        const cases = [
            ['app=x', ['sel-x']],
            ['app in (x,y)', ['sel-x', 'sel-y']],
            // Every namespace holds kube-root-ca.crt (unlabelled), as on a real cluster.
            ['!app', ['cm-one', 'kube-root-ca.crt', 'sel-none']],
        ];
        for (const [selector, want] of cases) {
            const got = await names(selector);
            check(eq(got, want), `labelSelector ${selector} -> ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
        }
    });

    await op('field_selector', async () => {
        const list = await core.listNamespacedConfigMap({ namespace: NS, fieldSelector: 'metadata.name=sel-y' });
        const names = list.items.map((i) => i.metadata.name);
        check(eq(names, ['sel-y']), `fieldSelector metadata.name=sel-y -> ${JSON.stringify(names)}`);
    });

    await op('limit_continue', async () => {
        const want = [];
        for (let i = 0; i < 5; i++) {
            want.push(`page-${i}`);
            await core.createNamespacedConfigMap({ namespace: NS, body: configMap(`page-${i}`, { i: `${i}` }, { page: 'yes' }) });
        }
        const seen = [];
        let token;
        let pages = 0;
        do {
            const list = await core.listNamespacedConfigMap({
                namespace: NS,
                labelSelector: 'page=yes',
                limit: 2,
                _continue: token,
            });
            pages += 1;
            check(list.items.length <= 2, `page ${pages} has ${list.items.length} items with limit=2`);
            seen.push(...list.items.map((i) => i.metadata.name));
            token = list.metadata?._continue;
            check(pages <= 5, 'more than 5 pages for 5 objects');
        } while (token);
        check(pages === 3, `took ${pages} pages, want 3 (2+2+1)`);
        check(eq([...seen].sort(), want), `paged names ${JSON.stringify(seen)}, want each of ${JSON.stringify(want)} once`);
    });

    await op('merge_patch', async () => {
        const patched = await core.patchNamespacedConfigMap(
            { name: 'cm-one', namespace: NS, body: { data: { b: null, c: 'merged' } } },
            setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        );
        check(eq(patched.data, { a: '1', c: 'merged' }), `merge patch answered data ${JSON.stringify(patched.data)}`);
        const back = await core.readNamespacedConfigMap({ name: 'cm-one', namespace: NS });
        check(eq(back.data, { a: '1', c: 'merged' }), `read back data ${JSON.stringify(back.data)}`);
    });

    await op('strategic_patch', async () => {
        await apps.createNamespacedDeployment({
            namespace: NS,
            body: deployment('smp', 1, [busybox('main'), busybox('sidecar')]),
        });
        const patched = await apps.patchNamespacedDeployment(
            {
                name: 'smp',
                namespace: NS,
                body: { spec: { template: { spec: { containers: [{ name: 'main', image: 'busybox:1.36' }] } } } },
            },
            setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
        );
        const containers = patched.spec.template.spec.containers.map((c) => [c.name, c.image]);
        check(
            eq(containers, [['main', 'busybox:1.36'], ['sidecar', 'busybox']]),
            `containers after strategic patch ${JSON.stringify(containers)}`,
        );
    });

    await op('json_patch', async () => {
        const patched = await core.patchNamespacedConfigMap(
            {
                name: 'cm-one',
                namespace: NS,
                body: [
                    { op: 'test', path: '/data/a', value: '1' },
                    { op: 'add', path: '/data/d', value: 'added' },
                    { op: 'replace', path: '/data/a', value: 'replaced' },
                ],
            },
            setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
        );
        check(
            eq(patched.data, { a: 'replaced', c: 'merged', d: 'added' }),
            `json patch answered data ${JSON.stringify(patched.data)}`,
        );
        // A failing test operation must reject the whole patch.
        const err = await expectApiError(
            () =>
                core.patchNamespacedConfigMap(
                    {
                        name: 'cm-one',
                        namespace: NS,
                        body: [
                            { op: 'test', path: '/data/a', value: 'not-this' },
                            { op: 'replace', path: '/data/a', value: 'bad' },
                        ],
                    },
                    setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
                ),
            'json patch with a failing test op',
        );
        check(err.code === 422, `failing test op answered ${err.code}, want 422`);
        const back = await core.readNamespacedConfigMap({ name: 'cm-one', namespace: NS });
        check(back.data?.a === 'replaced', `after failed test op a=${back.data?.a}`);
    });

    // Server-side apply through the generic object client, the client's own way.
    const applied = (data) => configMap('applied', data);
    const managers = (obj) => (obj.metadata.managedFields ?? []).map((m) => ({ manager: m.manager, operation: m.operation, fields: m.fieldsV1 }));

    await op('apply_twice', async () => {
        const first = await objects.patch(applied({ k: '1', j: '1' }), undefined, undefined, `${CLIENT}-a`, undefined, PatchStrategy.ServerSideApply);
        check(eq(first.data, { k: '1', j: '1' }), `first apply data ${JSON.stringify(first.data)}`);
        const second = await objects.patch(applied({ k: '2' }), undefined, undefined, `${CLIENT}-a`, undefined, PatchStrategy.ServerSideApply);
        check(eq(second.data, { k: '2' }), `second apply data ${JSON.stringify(second.data)}, want {"k":"2"} (j released)`);
        const mf = managers(second);
        check(
            mf.length === 1 && mf[0].manager === `${CLIENT}-a` && mf[0].operation === 'Apply',
            `managedFields ${JSON.stringify(mf)}, want one Apply entry for ${CLIENT}-a`,
        );
    });

    await op('apply_conflict', async () => {
        const err = await expectApiError(
            () => objects.patch(applied({ k: 'other' }), undefined, undefined, `${CLIENT}-b`, undefined, PatchStrategy.ServerSideApply),
            'apply by another manager without force',
        );
        const s = statusOf(err);
        check(err.code === 409, `conflicting apply answered ${err.code}, want 409`);
        check(s.reason === 'Conflict', `conflicting apply reason ${s.reason}, want Conflict`);
        const back = await core.readNamespacedConfigMap({ name: 'applied', namespace: NS });
        check(back.data?.k === '2', `after refused apply k=${back.data?.k}, want 2`);
    });

    await op('apply_force', async () => {
        const forced = await objects.patch(applied({ k: 'other' }), undefined, undefined, `${CLIENT}-b`, true, PatchStrategy.ServerSideApply);
        check(forced.data?.k === 'other', `forced apply k=${forced.data?.k}`);
        const owner = managers(forced).find((m) => m.manager === `${CLIENT}-b`);
        check(owner, `no managedFields entry for ${CLIENT}-b: ${JSON.stringify(managers(forced))}`);
        check(owner.operation === 'Apply', `${CLIENT}-b operation ${owner.operation}`);
        check(owner.fields?.['f:data']?.['f:k'] !== undefined, `${CLIENT}-b does not own data.k: ${JSON.stringify(owner.fields)}`);
        const a = managers(forced).find((m) => m.manager === `${CLIENT}-a`);
        check(!a?.fields?.['f:data']?.['f:k'], `${CLIENT}-a still owns data.k: ${JSON.stringify(a)}`);
    });

    await op('scale', async () => {
        await apps.createNamespacedDeployment({ namespace: NS, body: deployment('scaled', 1, [busybox('main')]) });
        // The Deployment controller writes status right after the create, which moves the
        // resourceVersion the Scale carries; like client-go's RetryOnConflict, read again on 409.
        let written;
        for (let attempt = 1; !written; attempt++) {
            const scale = await apps.readNamespacedDeploymentScale({ name: 'scaled', namespace: NS });
            check(scale.kind === 'Scale', `scale read kind ${scale.kind}`);
            if (attempt === 1) {
                check(scale.spec?.replicas === 1, `scale read spec ${JSON.stringify(scale.spec)}, want replicas 1`);
            }
            scale.spec.replicas = 3;
            try {
                written = await apps.replaceNamespacedDeploymentScale({ name: 'scaled', namespace: NS, body: scale });
            } catch (err) {
                if (!(err instanceof ApiException && err.code === 409 && attempt < 5)) {
                    throw err;
                }
                log(`scale: write conflicted (attempt ${attempt}); reading again`);
            }
        }
        check(written.spec?.replicas === 3, `scale write answered replicas ${written.spec?.replicas}`);
        const reread = await apps.readNamespacedDeploymentScale({ name: 'scaled', namespace: NS });
        check(reread.spec?.replicas === 3, `scale read back replicas ${reread.spec?.replicas}`);
        const d = await apps.readNamespacedDeployment({ name: 'scaled', namespace: NS });
        check(d.spec?.replicas === 3, `Deployment spec.replicas ${d.spec?.replicas}, want 3`);
    });

    const watcher = new Watch(kc);
    const cmPath = `/api/v1/namespaces/${NS}/configmaps`;

    await op('watch_from_rv', async () => {
        const list = await core.listNamespacedConfigMap({ namespace: NS });
        const rv = list.metadata.resourceVersion;
        const events = [];
        let ended;
        const controller = await watcher.watch(
            cmPath,
            { resourceVersion: rv, allowWatchBookmarks: false },
            (type, obj) => events.push([type, obj?.metadata?.name]),
            (err) => {
                ended = err ?? 'closed';
            },
        );
        try {
            check(ended === undefined, `watch ended at once: ${ended}`);
            await core.createNamespacedConfigMap({ namespace: NS, body: configMap('watched', { w: '1' }) });
            await waitFor('the ADDED event for watched', () => events.some(([, n]) => n === 'watched') || ended);
            // A moment for any replayed older events to show up too.
            await sleep(500);
            check(ended === undefined, `watch ended early: ${ended}`);
            check(eq(events, [['ADDED', 'watched']]), `watch from rv ${rv} yielded ${JSON.stringify(events)}, want exactly ADDED watched`);
        } finally {
            controller.abort();
        }
    });

    await op('watch_helper', async () => {
        const informer = makeInformer(
            kc,
            cmPath,
            () => core.listNamespacedConfigMap({ namespace: NS, labelSelector: 'informed=yes' }),
            'informed=yes',
        );
        const events = [];
        let informerError;
        informer.on('add', (o) => events.push(['ADDED', o.metadata.name, o.data?.v]));
        informer.on('update', (o) => events.push(['MODIFIED', o.metadata.name, o.data?.v]));
        informer.on('delete', (o) => events.push(['DELETED', o.metadata.name]));
        informer.on('error', (err) => {
            informerError = err;
        });
        await informer.start();
        try {
            const name = 'informed';
            const has = (t) => events.some(([type, n]) => type === t && n === name);
            await core.createNamespacedConfigMap({ namespace: NS, body: configMap(name, { v: '1' }, { informed: 'yes' }) });
            await waitFor('informer ADDED', () => has('ADDED') || informerError);
            await core.patchNamespacedConfigMap(
                { name, namespace: NS, body: { data: { v: '2' } } },
                setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
            );
            await waitFor('informer MODIFIED', () => has('MODIFIED') || informerError);
            await core.deleteNamespacedConfigMap({ name, namespace: NS });
            await waitFor('informer DELETED', () => has('DELETED') || informerError);
            check(!informerError, `informer error: ${describe(informerError)}`);
            const modified = events.find(([t]) => t === 'MODIFIED');
            check(modified[2] === '2', `MODIFIED carried v=${modified[2]}`);
            check(informer.list(NS).length === 0, `informer cache still holds ${informer.list(NS).length} objects`);
        } finally {
            await informer.stop();
        }
    });

    await op('pod_logs', async () => {
        await core.createNamespacedPod({
            namespace: NS,
            body: {
                metadata: { name: 'logger', namespace: NS },
                spec: { terminationGracePeriodSeconds: 1, containers: [busybox('main')] },
            },
        });
        await waitFor('pod logger Running', async () => {
            const p = await core.readNamespacedPod({ name: 'logger', namespace: NS });
            return p.status?.phase === 'Running';
        });
        // Log.log pipes the response body into the stream; the stream finishing is
        // the end of the log (its `done` callback is never called in 1.x).
        const chunks = [];
        let finished = false;
        const sink = new Writable({
            write(chunk, _enc, cb) {
                chunks.push(Buffer.from(chunk));
                cb();
            },
        });
        sink.on('finish', () => {
            finished = true;
        });
        await new Log(kc).log(NS, 'logger', 'main', sink, { follow: false });
        await waitFor('the log stream to end', () => finished);
        const text = Buffer.concat(chunks).toString('utf8');
        log(`pod_logs: ${JSON.stringify(text.slice(0, 200))}`);
        check(text.trim().length > 0, 'log text is empty');
        // The typed API reads the same log.
        const viaApi = await core.readNamespacedPodLog({ name: 'logger', namespace: NS, container: 'main' });
        check(typeof viaApi === 'string' && viaApi.trim().length > 0, `readNamespacedPodLog gave ${JSON.stringify(viaApi)}`);
    });

    await op('foreground_delete', async () => {
        const name = 'fg';
        await apps.createNamespacedDeployment({ namespace: NS, body: deployment(name, 2, [busybox('main')]) });
        const d = await apps.readNamespacedDeployment({ name, namespace: NS });
        const owned = (o) => (o.metadata.ownerReferences ?? []).some((r) => r.uid === d.metadata.uid);
        const rs = await waitFor('the ReplicaSet of fg', async () => {
            const l = await apps.listNamespacedReplicaSet({ namespace: NS });
            return l.items.find(owned);
        });
        await waitFor('2 pods of fg', async () => {
            const pods = await core.listNamespacedPod({ namespace: NS, labelSelector: `app=${name}` });
            return pods.items.length === 2;
        });
        await apps.deleteNamespacedDeployment({ name, namespace: NS, propagationPolicy: 'Foreground' });
        let sawFinalizer = false;
        await waitFor('the Deployment fg to be gone', async () => {
            try {
                const cur = await apps.readNamespacedDeployment({ name, namespace: NS });
                const fins = cur.metadata.finalizers ?? [];
                check(fins.includes('foregroundDeletion'), `Deployment exists during foreground deletion with finalizers ${JSON.stringify(fins)}`);
                check(cur.metadata.deletionTimestamp, 'Deployment has no deletionTimestamp during deletion');
                sawFinalizer = true;
                return false;
            } catch (err) {
                if (err instanceof ApiException && err.code === 404) {
                    return true;
                }
                throw err;
            }
        });
        log(`foreground_delete: saw the foregroundDeletion finalizer: ${sawFinalizer}`);
        await waitFor('the ReplicaSet of fg to be gone', () =>
            isGone(() => apps.readNamespacedReplicaSet({ name: rs.metadata.name, namespace: NS })),
        );
        await waitFor('the pods of fg to be gone', async () => {
            const pods = await core.listNamespacedPod({ namespace: NS, labelSelector: `app=${name}` });
            return pods.items.length === 0;
        });
    });

    await op('status_404', async () => {
        const err = await expectApiError(() => core.readNamespacedConfigMap({ name: 'no-such-thing', namespace: NS }), 'get missing');
        const s = statusOf(err);
        check(err.code === 404, `code ${err.code}, want 404`);
        check(s.kind === 'Status' && s.reason === 'NotFound' && s.code === 404, `status ${JSON.stringify(s)}`);
    });

    await op('status_409', async () => {
        const err = await expectApiError(
            () => core.createNamespacedConfigMap({ namespace: NS, body: configMap('cm-one', { a: 'again' }) }),
            'create existing',
        );
        const s = statusOf(err);
        check(err.code === 409, `code ${err.code}, want 409`);
        check(s.reason === 'AlreadyExists', `reason ${s.reason}, want AlreadyExists`);
    });

    await op('status_422', async () => {
        const err = await expectApiError(
            () => core.createNamespacedConfigMap({ namespace: NS, body: configMap('Bad_Name', { a: '1' }) }),
            'create invalid name',
        );
        const s = statusOf(err);
        check(err.code === 422, `code ${err.code}, want 422`);
        check(s.reason === 'Invalid', `reason ${s.reason}, want Invalid`);
        const causes = s.details?.causes ?? [];
        check(
            causes.some((c) => c.field === 'metadata.name') || /metadata\.name/.test(s.message ?? ''),
            `nothing names metadata.name: ${JSON.stringify(s)}`,
        );
    });

    await op('discovery', async () => {
        const version = await kc.makeApiClient(VersionApi).getCode();
        check(version.major === '1', `version major ${JSON.stringify(version.major)}`);
        const coreVersions = await kc.makeApiClient(CoreApi).getAPIVersions();
        check(coreVersions.versions?.includes('v1'), `core API versions ${JSON.stringify(coreVersions.versions)}`);
        const groups = await kc.makeApiClient(ApisApi).getAPIVersions();
        const appsGroup = groups.groups?.find((g) => g.name === 'apps');
        check(appsGroup, `API groups ${JSON.stringify(groups.groups?.map((g) => g.name))} lack apps`);
        check(appsGroup.versions.some((v) => v.groupVersion === 'apps/v1'), 'apps group lacks apps/v1');
        const resources = await apps.getAPIResources();
        const names = resources.resources.map((r) => r.name);
        check(names.includes('deployments'), `apps/v1 resources ${JSON.stringify(names)} lack deployments`);
        check(names.includes('deployments/scale'), `apps/v1 resources lack deployments/scale`);
    });

    await op('dynamic_client', async () => {
        const spec = configMap('dynamic', { via: 'KubernetesObjectApi' });
        const created = await objects.create(spec);
        check(created.kind === 'ConfigMap' && created.metadata.uid, `create answered ${JSON.stringify(created.metadata)}`);
        const got = await objects.read({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'dynamic', namespace: NS } });
        check(eq(got.data, { via: 'KubernetesObjectApi' }), `read data ${JSON.stringify(got.data)}`);
        const list = await objects.list('v1', 'ConfigMap', NS);
        check(list.items.some((i) => i.metadata.name === 'dynamic'), 'generic list lacks dynamic');
        await objects.delete({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'dynamic', namespace: NS } });
        await waitFor('dynamic to be gone', () =>
            isGone(() => objects.read({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'dynamic', namespace: NS } })),
        );
    });

    // The Gizmo definition (tests/testdata/crds/gizmos.yaml) is installed by the matrix.
    await op('custom_resource', async () => {
        const ref = { apiVersion: 'clients.miniplane.dev/v1', kind: 'Gizmo', metadata: { name: 'js-gizmo', namespace: NS } };
        const created = await objects.create({ ...ref, spec: { size: 1, color: 'red' } });
        check(created.kind === 'Gizmo' && created.metadata.uid, `create answered ${JSON.stringify(created)}`);
        const got = await objects.read(ref);
        check(eq(got.spec, { size: 1, color: 'red' }), `read spec ${JSON.stringify(got.spec)}`);
        const list = await objects.list('clients.miniplane.dev/v1', 'Gizmo', NS);
        check(list.items.some((i) => i.metadata.name === 'js-gizmo'), 'the Gizmo is not in the list');
        const patched = await objects.patch(
            { ...ref, spec: { size: 2 } },
            undefined, undefined, undefined, undefined, PatchStrategy.MergePatch,
        );
        check(eq(patched.spec, { size: 2, color: 'red' }), `merge-patched spec ${JSON.stringify(patched.spec)}`);
        const applied = await objects.patch(
            { ...ref, spec: { size: 3, color: 'blue' } },
            undefined, undefined, `${CLIENT}-apply`, true, PatchStrategy.ServerSideApply,
        );
        check(eq(applied.spec, { size: 3, color: 'blue' }), `applied spec ${JSON.stringify(applied.spec)}`);
        const err = await expectApiError(
            () => objects.patch({ ...ref, spec: { size: 'big' } }, undefined, undefined, undefined, undefined, PatchStrategy.MergePatch),
            'a string size',
        );
        check(err.code === 422, `a string size: code ${err.code}, want 422`);
        check(/spec\.size/.test(statusOf(err).message ?? ''), `the 422 does not name spec.size: ${JSON.stringify(statusOf(err))}`);
        await objects.delete(ref);
        await waitFor('js-gizmo to be gone', () => isGone(() => objects.read(ref)));
    });

    try {
        await core.deleteNamespace({ name: NS });
    } catch (err) {
        log('deleting the namespace failed:', describe(err));
    }
}

try {
    await main();
} catch (err) {
    // Only the namespace setup runs outside an operation; without it nothing can run.
    log('setup failed:', err);
    const why = describe(err).replace(/\s+/g, ' ').trim();
    for (const name of OPERATIONS.filter((n) => !reported.has(n))) {
        console.log(`RESULT ${name} FAIL namespace setup failed: ${why}`);
    }
    process.exit(1);
}
process.exit(failures === 0 ? 0 : 1);
