#!/usr/bin/env ruby
# frozen_string_literal: true

# Everyday operations of the Ruby client (kubeclient) against the server the
# KUBECONFIG points at. One "RESULT <operation> PASS|FAIL ..." line per
# operation on stdout, in the order of the client matrix; everything else on
# stderr. Exit 0 iff every operation passed.

require 'kubeclient'
require 'json'
require 'timeout'

$stdout.sync = true
$stderr.sync = true

NS = 'client-ruby'
MANAGER_A = 'ruby-a'
MANAGER_B = 'ruby-b'
WAIT = 60 # seconds: the longest any single wait may take
OP_LIMIT = 90 # seconds: a backstop for one whole operation

# An assertion about a value read back from the server did not hold.
class Failed < StandardError; end

def check(condition, message)
  raise Failed, message unless condition
end

def log(message)
  warn "[ruby] #{message}"
end

# Wall-clock deadlines for the waits (the script talks to a live server).
def monotonic
  Process.clock_gettime(Process::CLOCK_MONOTONIC)
end

# Polls the block every `interval` seconds until it returns a truthy value;
# raises Failed with `what` after `limit` seconds.
def wait_for(what, limit: WAIT, interval: 0.2)
  deadline = monotonic + limit
  loop do
    value = yield
    return value if value
    raise Failed, "timed out after #{limit}s waiting for #{what}" if monotonic > deadline

    sleep interval
  end
end

# The metav1.Status in an error's response body (empty when it is not JSON).
def status_of(error)
  body = error.response.respond_to?(:body) ? error.response.body : error.response.to_s
  JSON.parse(body.to_s)
rescue JSON::ParserError
  {}
end

# Runs `block` expecting a Kubeclient::HttpError with `code`; returns it.
def expect_http_error(code, what)
  yield
  raise Failed, "#{what}: expected HTTP #{code}, the call succeeded"
rescue Kubeclient::HttpError => e
  check(e.error_code == code, "#{what}: expected HTTP #{code}, got #{e.error_code}: #{e.message}")
  e
end

$results = []

def operation(name)
  Timeout.timeout(OP_LIMIT) { yield }
  $results << true
  puts "RESULT #{name} PASS"
rescue Exception => e # rubocop:disable Lint/RescueException -- Timeout::Error is not a StandardError
  raise if e.is_a?(Interrupt) || e.is_a?(SystemExit)

  $results << false
  reason = "#{e.class}: #{e.message}".gsub(/\s+/, ' ')[0, 400]
  log("#{name} failed: #{reason}\n  #{(e.backtrace || []).first(4).join("\n  ")}")
  puts "RESULT #{name} FAIL #{reason}"
end

def names(list)
  list.map { |item| item.metadata.name }.sort
end

# --- clients from the kubeconfig, the way kubeclient's README builds them ---

config = Kubeclient::Config.read(ENV.fetch('KUBECONFIG'))
context = config.context
ENDPOINT = context.api_endpoint.chomp('/')
CLIENT_OPTIONS = {
  ssl_options: context.ssl_options,
  auth_options: context.auth_options,
  timeouts: { open: 10, read: 30 }
}.freeze
log "server #{ENDPOINT} (#{context.ssl_options.key?(:cert_store) ? 'with' : 'without'} a cluster CA, " \
    "auth #{context.auth_options.keys.inspect}, client cert #{context.ssl_options.key?(:client_cert)})"

# A client for one API group version ("v1" for the core group, "apps/v1", ...).
def client_for(group_version)
  group, _, version = group_version.rpartition('/')
  path = group.empty? ? '/api' : "/apis/#{group}"
  Kubeclient::Client.new(ENDPOINT + path, version, **CLIENT_OPTIONS)
end

core = client_for('v1')
apps = client_for('apps/v1')

def config_map(name, data, labels = nil)
  metadata = { name: name, namespace: NS }
  metadata[:labels] = labels if labels
  Kubeclient::Resource.new(metadata: metadata, data: data)
end

def deployment(name, replicas, containers)
  Kubeclient::Resource.new(
    metadata: { name: name, namespace: NS, labels: { app: name } },
    spec: {
      replicas: replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { terminationGracePeriodSeconds: 1, containers: containers }
      }
    }
  )
end

def gone?(&block)
  block.call
  false
rescue Kubeclient::ResourceNotFoundError
  true
end

# --- a fresh namespace ---

begin
  unless gone? { core.get_namespace(NS) }
    log "deleting namespace #{NS} left by an earlier run"
    begin
      core.delete_namespace(NS)
    rescue Kubeclient::ResourceNotFoundError
      nil
    end
    wait_for("namespace #{NS} to go") { gone? { core.get_namespace(NS) } }
  end
  core.create_namespace(Kubeclient::Resource.new(metadata: { name: NS }))
rescue StandardError => e
  log "cannot prepare namespace #{NS}: #{e.class}: #{e.message}"
end

# --- the operations, in the matrix's order ---

operation('create') do
  created = core.create_config_map(config_map('cm-main', { a: '1', b: '2' }))
  check(created.metadata.name == 'cm-main', "created name is #{created.metadata.name.inspect}")
  check(!created.metadata.uid.to_s.empty?, 'created object has no uid')
  check(!created.metadata.resourceVersion.to_s.empty?, 'created object has no resourceVersion')
  check(created.data.to_h == { a: '1', b: '2' }, "created data is #{created.data.to_h}")
end

operation('get') do
  got = core.get_config_map('cm-main', NS)
  check(got.kind == 'ConfigMap' && got.apiVersion == 'v1', "kind/apiVersion #{got.kind}/#{got.apiVersion}")
  check(got.data.to_h == { a: '1', b: '2' }, "read back data #{got.data.to_h}")
end

operation('list') do
  list = core.get_config_maps(namespace: NS)
  check(names(list).include?('cm-main'), "list has #{names(list)}")
  check(!list.resourceVersion.to_s.empty?, 'list has no resourceVersion')
end

operation('replace') do
  current = core.get_config_map('cm-main', NS)
  read_rv = current.metadata.resourceVersion
  current.data.a = 'replaced'
  updated = core.update_config_map(current)
  check(updated.data.a == 'replaced', "PUT answered data #{updated.data.to_h}")
  check(updated.metadata.resourceVersion != read_rv, 'resourceVersion did not change on PUT')
  check(core.get_config_map('cm-main', NS).data.a == 'replaced', 'read back after PUT lacks the change')

  # The same object again still carries the resourceVersion it was read at.
  current.data.a = 'stale'
  error = expect_http_error(409, 'PUT with a stale resourceVersion') { core.update_config_map(current) }
  check(status_of(error)['reason'] == 'Conflict', "stale PUT reason #{status_of(error)['reason'].inspect}")
  check(core.get_config_map('cm-main', NS).data.a == 'replaced', 'the stale PUT changed the object')
end

operation('label_selector') do
  core.create_config_map(config_map('sel-x', { v: 'x' }, { app: 'x', suite: 'selectors' }))
  core.create_config_map(config_map('sel-y', { v: 'y' }, { app: 'y', suite: 'selectors' }))
  core.create_config_map(config_map('sel-none', { v: 'none' }, { suite: 'selectors' }))
  {
    'app=x' => %w[sel-x],
    'app in (x,y)' => %w[sel-x sel-y],
    'suite=selectors,!app' => %w[sel-none]
  }.each do |selector, expected|
    got = names(core.get_config_maps(namespace: NS, label_selector: selector))
    check(got == expected, "labelSelector #{selector.inspect} returned #{got}, expected #{expected}")
  end
end

operation('field_selector') do
  got = core.get_config_maps(namespace: NS, field_selector: 'metadata.name=sel-y')
  check(names(got) == %w[sel-y], "fieldSelector metadata.name=sel-y returned #{names(got)}")
end

operation('limit_continue') do
  expected = (1..5).map { |i| "page-#{i}" }
  expected.each { |name| core.create_config_map(config_map(name, { n: name }, { suite: 'pages' })) }
  seen = []
  pages = 0
  continue = nil
  loop do
    page = core.get_config_maps(namespace: NS, label_selector: 'suite=pages', limit: 2, continue: continue)
    pages += 1
    check(page.size <= 2, "page #{pages} has #{page.size} items with limit=2")
    seen.concat(names(page))
    continue = page.continue
    break if page.last?

    check(pages < 10, 'more than 10 pages for 5 objects')
  end
  check(seen.sort == expected, "paged names #{seen}, expected each of #{expected} once")
  check(pages == 3, "#{pages} pages for 5 objects with limit=2, expected 3")
end

operation('merge_patch') do
  patched = core.merge_patch_config_map('cm-main', { data: { b: nil, c: 'merged' } }, NS)
  check(patched.data.to_h == { a: 'replaced', c: 'merged' }, "merge patch answered #{patched.data.to_h}")
  got = core.get_config_map('cm-main', NS).data.to_h
  check(got == { a: 'replaced', c: 'merged' }, "read back after merge patch #{got}")
end

operation('strategic_patch') do
  apps.create_deployment(deployment('patched', 1, [
                                      { name: 'web', image: 'nginx:1.25' },
                                      { name: 'sidecar', image: 'busybox:1.36', command: %w[sleep 3600] }
                                    ]))
  patch = { spec: { template: { spec: { containers: [{ name: 'web', image: 'nginx:1.27' }] } } } }
  apps.patch_deployment('patched', patch, NS)
  containers = apps.get_deployment('patched', NS).spec.template.spec.containers
  images = containers.to_h { |c| [c.name, c.image] }
  check(images == { 'web' => 'nginx:1.27', 'sidecar' => 'busybox:1.36' },
        "containers after strategic merge patch: #{images}")
  check(containers.find { |c| c.name == 'sidecar' }.command == %w[sleep 3600], 'sidecar lost its command')
end

operation('json_patch') do
  patch = [
    { op: 'test', path: '/data/c', value: 'merged' },
    { op: 'add', path: '/data/d', value: 'added' },
    { op: 'replace', path: '/data/a', value: 'json' }
  ]
  patched = core.json_patch_config_map('cm-main', patch, NS)
  want = { a: 'json', c: 'merged', d: 'added' }
  check(patched.data.to_h == want, "JSON patch answered #{patched.data.to_h}")
  got = core.get_config_map('cm-main', NS).data.to_h
  check(got == want, "read back after JSON patch #{got}")
end

# kubeclient sends `resource.to_json` for apply: a plain Hash serializes as
# the object (a Kubeclient::Resource would not).
def applied_config(data)
  { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'applied', namespace: NS }, data: data }
end

def managers(object)
  (object.metadata.managedFields || []).map(&:to_h)
end

operation('apply_twice') do
  first = core.apply_config_map(applied_config({ k: '1', j: '1' }), field_manager: MANAGER_A, force: false)
  check(first.data.to_h == { k: '1', j: '1' }, "first apply answered #{first.data.to_h}")
  second = core.apply_config_map(applied_config({ k: '2' }), field_manager: MANAGER_A, force: false)
  check(second.data.to_h == { k: '2' }, "second apply answered #{second.data.to_h} (j should be gone)")
  got = core.get_config_map('applied', NS)
  check(got.data.to_h == { k: '2' }, "read back after second apply #{got.data.to_h}")
  mine = managers(got).select { |m| m[:manager] == MANAGER_A }
  check(mine.size == 1, "managedFields entries for #{MANAGER_A}: #{mine}")
  check(mine[0][:operation] == 'Apply', "#{MANAGER_A} operation #{mine[0][:operation].inspect}")
end

operation('apply_conflict') do
  error = expect_http_error(409, "apply by #{MANAGER_B} without force") do
    core.apply_config_map(applied_config({ k: 'other' }), field_manager: MANAGER_B, force: false)
  end
  status = status_of(error)
  check(status['reason'] == 'Conflict', "reason #{status['reason'].inspect}, expected Conflict")
  check(core.get_config_map('applied', NS).data.k == '2', 'the conflicting apply changed data.k')
end

operation('apply_force') do
  forced = core.apply_config_map(applied_config({ k: 'other' }), field_manager: MANAGER_B, force: true)
  check(forced.data.k == 'other', "forced apply answered #{forced.data.to_h}")
  got = core.get_config_map('applied', NS, as: :parsed)
  check(got['data'] == { 'k' => 'other' }, "read back after forced apply #{got['data']}")
  entries = got['metadata']['managedFields'] || []
  owner = entries.find { |m| m['manager'] == MANAGER_B }
  check(owner && owner['operation'] == 'Apply', "no Apply entry for #{MANAGER_B} in #{entries}")
  check(owner.dig('fieldsV1', 'f:data', 'f:k'), "#{MANAGER_B} does not own data.k: #{owner['fieldsV1']}")
  previous = entries.find { |m| m['manager'] == MANAGER_A }
  check(previous.nil? || !previous.dig('fieldsV1', 'f:data', 'f:k'), "#{MANAGER_A} still owns data.k")
end

operation('scale') do
  apps.create_deployment(deployment('scaled', 1, [{ name: 'web', image: 'nginx:1.25' }]))
  # Subresources are not discovered as entities; the generic calls take "name/scale".
  scale = apps.get_entity('deployments', 'scaled/scale', NS)
  check(scale.kind == 'Scale' && scale.apiVersion == 'autoscaling/v1', "scale is #{scale.kind}/#{scale.apiVersion}")
  check(scale.spec.replicas == 1, "scale spec.replicas #{scale.spec.replicas.inspect}, expected 1")
  # The Scale carries the Deployment's resourceVersion, which the controllers
  # move on as they work: read again and retry on a 409, as clients do.
  attempts = 0
  written = begin
    attempts += 1
    scale.spec.replicas = 3
    apps.handle_exception do
      apps.rest_client["namespaces/#{NS}/deployments/scaled/scale"]
          .put(scale.to_h.to_json, { 'Content-Type' => 'application/json' }.merge(apps.headers))
    end
  rescue Kubeclient::HttpError => e
    raise unless e.error_code == 409 && attempts < 10

    log "scale PUT conflicted (attempt #{attempts}); reading again"
    sleep 0.3
    scale = apps.get_entity('deployments', 'scaled/scale', NS)
    retry
  end
  check(JSON.parse(written.body).dig('spec', 'replicas') == 3, "PUT scale answered #{written.body}")
  check(apps.get_deployment('scaled', NS).spec.replicas == 3, 'Deployment spec.replicas is not 3')
  check(apps.get_entity('deployments', 'scaled/scale', NS).spec.replicas == 3, 'scale reads back not 3')
end

# The next item of `queue` within `limit` seconds, or nil (Ruby 3.1's
# Queue#pop has no timeout).
def pop_within(queue, limit)
  deadline = monotonic + limit
  loop do
    return queue.pop(true)
  rescue ThreadError
    return nil if monotonic > deadline

    sleep 0.05
  end
end

# Collects a watch's notices on a thread; `stop` ends it.
class Collector
  attr_reader :queue

  def initialize(watcher)
    @watcher = watcher
    @queue = Queue.new
    @thread = Thread.new do
      watcher.each { |notice| @queue << notice }
      @queue << :closed
    rescue StandardError => e
      @queue << e
    end
  end

  # The next notice within `limit` seconds (nil on time out); raises a watch error.
  def next_notice(limit)
    notice = pop_within(@queue, limit)
    raise notice if notice.is_a?(Exception)
    raise Failed, 'the watch ended early' if notice == :closed

    notice
  end

  def stop
    @watcher.finish
    @thread.join(5) || @thread.kill
  end
end

operation('watch_from_rv') do
  list = core.get_config_maps(namespace: NS)
  rv = list.resourceVersion
  check(!rv.to_s.empty?, 'list has no resourceVersion')
  # The low-level watch: a WatchStream over the raw notices, from the list's version.
  collector = Collector.new(core.watch_entities('configmaps', namespace: NS, resource_version: rv, as: :parsed))
  begin
    core.create_config_map(config_map('watched', { w: '1' }))
    notice = collector.next_notice(WAIT)
    check(notice, "no notice within #{WAIT}s")
    got = [notice['type'], notice.dig('object', 'metadata', 'name')]
    check(got == %w[ADDED watched], "first notice #{got} (#{notice.to_json[0, 200]}), expected ADDED watched")
    extra = collector.next_notice(1)
    check(extra.nil?, "unexpected further notice #{extra.to_json[0, 200]}")
  ensure
    collector.stop
  end
end

operation('watch_helper') do
  rv = core.get_config_maps(namespace: NS).resourceVersion
  seen = Queue.new
  watching = Thread.new do
    core.watch_config_maps(namespace: NS, field_selector: 'metadata.name=helped', resource_version: rv) do |notice|
      seen << notice
      break if notice.type == 'DELETED' || notice.type == 'ERROR'
    end
    seen << :closed
  rescue StandardError => e
    seen << e
  end
  begin
    core.create_config_map(config_map('helped', { h: '1' }))
    core.merge_patch_config_map('helped', { data: { h: '2' } }, NS)
    core.delete_config_map('helped', NS)
    types = []
    deadline = monotonic + WAIT
    until types.last == 'DELETED'
      notice = pop_within(seen, [deadline - monotonic, 0].max)
      raise Failed, "saw #{types} then nothing within #{WAIT}s" if notice.nil?
      raise notice if notice.is_a?(Exception)
      raise Failed, "the watch ended after #{types}" if notice == :closed

      check(notice.object.metadata.name == 'helped', "notice for #{notice.object.metadata.name}")
      check(notice.type != 'ERROR', "ERROR notice #{notice.object.to_h}")
      types << notice.type
    end
    check(types == %w[ADDED MODIFIED DELETED], "notices #{types}, expected ADDED MODIFIED DELETED")
  ensure
    watching.join(5) || watching.kill
  end
end

operation('pod_logs') do
  core.create_pod(Kubeclient::Resource.new(
                    metadata: { name: 'logger', namespace: NS },
                    spec: {
                      terminationGracePeriodSeconds: 1,
                      containers: [{ name: 'main', image: 'busybox', command: ['sh', '-c', 'echo hello; sleep 3600'] }]
                    }
                  ))
  wait_for('pod logger to be Running') { core.get_pod('logger', NS).status&.phase == 'Running' }
  text = wait_for('non-empty logs of pod logger', limit: 20) do
    body = core.get_pod_log('logger', NS).body.to_s
    body.empty? ? nil : body
  end
  log "logger's log starts #{text[0, 120].inspect}"
  check(text.strip.length.positive?, 'empty log')
end

operation('foreground_delete') do
  created = apps.create_deployment(deployment('doomed', 2, [{ name: 'web', image: 'nginx:1.25' }]))
  uid = created.metadata.uid
  owned_by = ->(item, owner_uid) { (item.metadata.ownerReferences || []).any? { |o| o.uid == owner_uid } }
  replica_set = wait_for('the ReplicaSet of Deployment doomed') do
    apps.get_replica_sets(namespace: NS).find { |rs| owned_by.call(rs, uid) }
  end
  rs_uid = replica_set.metadata.uid
  log "ReplicaSet #{replica_set.metadata.name}"
  options = Kubeclient::Resource.new(apiVersion: 'v1', kind: 'DeleteOptions', propagationPolicy: 'Foreground')
  # The DELETE answers with the object as it stays until its dependents are gone.
  answer = apps.delete_deployment('doomed', NS, delete_options: options)
  check(answer.kind == 'Deployment', "DELETE answered a #{answer.kind}, expected the Deployment")
  check((answer.metadata.finalizers || []).include?('foregroundDeletion') && answer.metadata.deletionTimestamp,
        "DELETE answered finalizers #{answer.metadata.finalizers.inspect}, " \
        "deletionTimestamp #{answer.metadata.deletionTimestamp.inspect}")

  observed_finalizer = false
  wait_for('Deployment doomed to go') do
    current = apps.get_deployment('doomed', NS)
    finalizers = current.metadata.finalizers || []
    check(finalizers.include?('foregroundDeletion'), "Deployment being deleted has finalizers #{finalizers}")
    check(current.metadata.deletionTimestamp, 'Deployment being deleted has no deletionTimestamp')
    observed_finalizer = true
    false
  rescue Kubeclient::ResourceNotFoundError
    true
  end
  log "saw the foregroundDeletion finalizer: #{observed_finalizer}"
  wait_for('the ReplicaSet and pods of doomed to go') do
    replica_sets = apps.get_replica_sets(namespace: NS).select { |rs| owned_by.call(rs, uid) }
    pods = core.get_pods(namespace: NS).select { |pod| owned_by.call(pod, rs_uid) }
    replica_sets.empty? && pods.empty?
  end
end

operation('status_404') do
  error = expect_http_error(404, 'get of a missing ConfigMap') { core.get_config_map('no-such-map', NS) }
  check(error.is_a?(Kubeclient::ResourceNotFoundError), "error class #{error.class}")
  status = status_of(error)
  check(status['kind'] == 'Status' && status['reason'] == 'NotFound' && status['code'] == 404,
        "status #{status.slice('kind', 'reason', 'code')}")
end

operation('status_409') do
  error = expect_http_error(409, 'create of an existing name') do
    core.create_config_map(config_map('cm-main', { a: 'again' }))
  end
  status = status_of(error)
  check(status['reason'] == 'AlreadyExists', "reason #{status['reason'].inspect}, expected AlreadyExists")
end

operation('status_422') do
  error = expect_http_error(422, 'create with name Bad_Name') { core.create_config_map(config_map('Bad_Name', {})) }
  status = status_of(error)
  check(status['reason'] == 'Invalid', "reason #{status['reason'].inspect}, expected Invalid")
  causes = status.dig('details', 'causes') || []
  check(causes.any? { |c| c['field'] == 'metadata.name' } || error.message.include?('metadata.name'),
        "no cause names metadata.name: #{status.to_json[0, 300]}")
end

operation('discovery') do
  version = JSON.parse(core.handle_exception { core.create_rest_client('/version').get(core.headers) })
  check(version['major'] == '1', "server version major #{version['major'].inspect}")
  check(core.api_valid?, 'core client: api_valid? is false')
  check(core.api['versions'].include?('v1'), "core API versions #{core.api['versions']}")
  groups = JSON.parse(core.handle_exception { core.create_rest_client('/apis').get(core.headers) })
  check(groups['groups'].any? { |g| g['name'] == 'apps' }, 'API groups lack apps')
  check(apps.api_valid?, 'apps client: api_valid? is false')
  check(apps.api['versions'].any? { |v| v['groupVersion'] == 'apps/v1' }, "apps versions #{apps.api['versions']}")
  apps.discover
  check(apps.respond_to?(:get_deployments) && apps.respond_to?(:get_replica_sets),
        'discovery of apps/v1 defined no get_deployments/get_replica_sets')
  resources = JSON.parse(apps.handle_exception { apps.rest_client.get(apps.headers) })['resources']
  check(resources.any? { |r| r['name'] == 'deployments' && r['kind'] == 'Deployment' }, 'apps/v1 lacks deployments')
end

operation('dynamic_client') do
  # The generic entity methods on a client made from a group version string.
  dynamic = client_for('v1')
  kind = 'ConfigMap'
  resource = 'configmaps'
  created = dynamic.create_entity(kind, resource, config_map('dynamic', { via: 'generic' }))
  check(created.kind == kind && created.data.via == 'generic', "create answered #{created.to_h}")
  got = dynamic.get_entity(resource, 'dynamic', NS)
  check(got.data.to_h == { via: 'generic' }, "get answered #{got.data.to_h}")
  listed = dynamic.get_entities(kind, resource, namespace: NS)
  check(names(listed).include?('dynamic'), "list has #{names(listed)}")
  check(listed.kind == kind, "list kind #{listed.kind}")
  dynamic.delete_entity(resource, 'dynamic', NS)
  check(gone? { dynamic.get_entity(resource, 'dynamic', NS) }, 'still there after delete')
end

operation('custom_resource') do
  # The Gizmo definition (tests/testdata/crds/gizmos.yaml) is installed by the matrix.
  gizmos = client_for('clients.miniplane.dev/v1')
  gizmos.discover
  check(gizmos.respond_to?(:get_gizmos), 'discovery of clients.miniplane.dev/v1 defined no get_gizmos')
  made = gizmos.create_gizmo(
    Kubeclient::Resource.new(
      metadata: { name: 'rb-gizmo', namespace: NS },
      spec: { size: 1, color: 'red' }
    )
  )
  check(made.kind == 'Gizmo' && made.metadata.uid, "create answered #{made.to_h}")
  got = gizmos.get_gizmo('rb-gizmo', NS)
  check(got.spec.to_h == { size: 1, color: 'red' }, "get answered #{got.spec.to_h}")
  check(names(gizmos.get_gizmos(namespace: NS)).include?('rb-gizmo'), 'the Gizmo is not in the list')
  patched = gizmos.merge_patch_gizmo('rb-gizmo', { spec: { size: 2 } }, NS)
  check(patched.spec.to_h == { size: 2, color: 'red' }, "merge-patched #{patched.spec.to_h}")
  error = expect_http_error(422, 'a string size') do
    gizmos.merge_patch_gizmo('rb-gizmo', { spec: { size: 'big' } }, NS)
  end
  check(error.message.include?('spec.size'), "the 422 does not name spec.size: #{error.message}")
  gizmos.delete_gizmo('rb-gizmo', NS)
  check(gone? { gizmos.get_gizmo('rb-gizmo', NS) }, 'still there after delete')
end

# --- clean up ---

begin
  core.delete_namespace(NS)
  wait_for("namespace #{NS} to go", limit: 30) { gone? { core.get_namespace(NS) } }
rescue StandardError => e
  log "clean-up: #{e.class}: #{e.message}"
end

passed = $results.count(true)
log "#{passed} of #{$results.size} operations passed"
exit($results.all? ? 0 : 1)
