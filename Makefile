# revtrack. `make run` and `make test` install what is missing (Debian packages and Maven artifacts
# through deploy/local/stack; Go modules through the Go toolchain).
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

# A Go toolchain that can build go.mod's version, installed if missing (deploy/local/ensure-go).
ifndef GO
GO := $(shell deploy/local/ensure-go)
endif
BIN := bin/revtrack
# The development tools (platform fakes, demo page, demo workspace) `make run` starts: never in $(BIN).
DEV_BIN := bin/revtrack-dev
TEST_STACK := STACK_NAME=test deploy/local/stack
GO_TEST_FLAGS ?= -count=1 -race -timeout 15m

.PHONY: vulncheck help tools chdb browser-deps mcp-deps console console-screenshots build run test test-unit stack-up stack-down stack-status stack-test stack-test-down lint fmt tidy golden clean

help: ## List the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-16s %s\n", $$1, $$2}'

tools: ## Install the tools that are missing (curl; jq, which the docs' examples and tests/docs use)
	@command -v curl >/dev/null || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq curl)
	@command -v jq >/dev/null || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq jq)

build: console ## Build the web console, then bin/revtrack (the product, which embeds it) and bin/revtrack-dev (the fakes and the demo of make run)
	$(GO) build -o $(BIN) ./cmd/revtrack
	$(GO) build -o $(DEV_BIN) ./cmd/revtrack-dev

run: tools build ## Local stack up, migrate, demo data, every component; prints the ready line
	deploy/local/run

test: tools chdb browser-deps mcp-deps console stack-test ## Every test, integration tests included, against the real test stack
	npm test --prefix $(CONSOLE) -- --reporter=dot
	eval "$$($(TEST_STACK) env)"; export REVTRACK_KAFKA_BROKERS REVTRACK_CLICKHOUSE_ADDR REVTRACK_CLICKHOUSE_USERNAME REVTRACK_CLICKHOUSE_PASSWORD REVTRACK_REDIS_ADDR; \
	export REVTRACK_CHDB_PYTHON=$(CURDIR)/$(CHDB_VENV)/bin/python; \
	$(GO) vet ./... && $(GO) test $(GO_TEST_FLAGS) ./...
	GO=$(GO) deploy/local/vulncheck

vulncheck: ## govulncheck: fail on any reachable vulnerability not listed in deploy/local/vulncheck.allow
	GO=$(GO) deploy/local/vulncheck

# Headless Chromium (Debian's package; browsers are never downloaded by a test tool) and the pinned
# Node packages of the tracker.js browser tests.
BROWSERTEST := ingest/tracker/browsertest
browser-deps: ## Install Chromium and the browser tests' Node packages
	@test -x /usr/bin/chromium || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium)
	@command -v node >/dev/null || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm)
	@if [ ! -d $(BROWSERTEST)/node_modules ] || [ $(BROWSERTEST)/package-lock.json -nt $(BROWSERTEST)/node_modules ]; then \
		npm ci --prefix $(BROWSERTEST) --no-audit --no-fund --loglevel=error && touch $(BROWSERTEST)/node_modules; \
	fi

# The web console (docs/CONSOLE.md): its pinned Node packages (npm ci when node_modules is missing
# or older than the lockfile), then the OpenAPI client's freshness check, the type check and vite
# build into console/dist, which bin/revtrack embeds. Its browser tests (console/browser_test.go)
# run in `go test` with Chromium from browser-deps.
CONSOLE := console
console: ## Build the web console into console/dist (embedded in bin/revtrack)
	@command -v node >/dev/null || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm)
	@if [ ! -d $(CONSOLE)/node_modules ] || [ $(CONSOLE)/package-lock.json -nt $(CONSOLE)/node_modules ]; then \
		npm ci --prefix $(CONSOLE) --no-audit --no-fund --loglevel=error && touch $(CONSOLE)/node_modules; \
	fi
	npm run --prefix $(CONSOLE) --silent build

console-screenshots: browser-deps console stack-test ## Screenshots of every console screen into docs/console/ (the browser tests, with the demo data and its tracking, as make run)
	mkdir -p docs/console
	eval "$$($(TEST_STACK) env)"; export REVTRACK_KAFKA_BROKERS REVTRACK_CLICKHOUSE_ADDR REVTRACK_CLICKHOUSE_USERNAME REVTRACK_CLICKHOUSE_PASSWORD REVTRACK_REDIS_ADDR; \
	CONSOLE_SCREENSHOTS=$(CURDIR)/docs/console $(GO) test -count=1 -run TestConsoleInChromium ./console/

# The official MCP TypeScript SDK (pinned in its package-lock.json), a client of /api/mcp in the MCP
# tests (query/mcp/clienttest).
MCPCLIENTTEST := query/mcp/clienttest
mcp-deps: ## Install the MCP client tests' Node packages
	@command -v node >/dev/null || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm)
	@if [ ! -d $(MCPCLIENTTEST)/node_modules ] || [ $(MCPCLIENTTEST)/package-lock.json -nt $(MCPCLIENTTEST)/node_modules ]; then \
		npm ci --prefix $(MCPCLIENTTEST) --no-audit --no-fund --loglevel=error && touch $(MCPCLIENTTEST)/node_modules; \
	fi

# The current ClickHouse engine, embedded (chdb from PyPI), so tests prove the SQL also runs on the
# ClickHouse production uses while the local server is 18.16.
CHDB_VERSION := 4.4.0
CHDB_VENV := .stack/chdb
chdb: ## Install the embedded current ClickHouse used by the compatibility tests
	@if ! $(CHDB_VENV)/bin/python -c 'import chdb, sys; sys.exit(chdb.__version__ != "$(CHDB_VERSION)")' 2>/dev/null; then \
		python3 -m venv $(CHDB_VENV) 2>/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv && python3 -m venv $(CHDB_VENV); }; \
		$(CHDB_VENV)/bin/pip install -q --disable-pip-version-check chdb==$(CHDB_VERSION); \
	fi

stack-up: ## Start the development stack (Kafka, ClickHouse, Redis)
	deploy/local/stack up

stack-down: ## Stop the development stack
	deploy/local/stack down

stack-status: ## Show the development stack
	deploy/local/stack status

stack-test: ## Start the test stack beside the development stack
	$(TEST_STACK) up

stack-test-down: ## Stop the test stack
	$(TEST_STACK) down

lint: ## gofmt and go vet
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (gofmt -l $$(git ls-files '*.go'); exit 1)
	$(GO) vet ./...

fmt: ## Format the code
	gofmt -w $$(git ls-files '*.go')

tidy: ## go mod tidy
	$(GO) mod tidy

golden: ## Rewrite golden files after a deliberate contract change
	UPDATE_GOLDEN=1 $(GO) test -count=1 ./...

# The ingest benchmark (docs/BENCHMARKS.md). Not a test: it prints a table. BENCH_FLAGS passes flags
# to bench/ingest, e.g. BENCH_FLAGS='-conns 128 -runs 5' or BENCH_FLAGS='-cpuprofile bin/edge.pprof'.
BENCH_FLAGS ?=
.PHONY: bench-ingest
bench-ingest: tools stack-test ## Ingest benchmark: edge vs the floor and a bare handler at 64 and 256 connections, browser batches, tracker.js bytes, freshness
	@command -v wrk >/dev/null || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk)
	eval "$$($(TEST_STACK) env)"; export REVTRACK_KAFKA_BROKERS REVTRACK_CLICKHOUSE_ADDR REVTRACK_CLICKHOUSE_USERNAME REVTRACK_CLICKHOUSE_PASSWORD REVTRACK_REDIS_ADDR; \
	$(GO) build -o bin/bench-ingest ./bench/ingest && bin/bench-ingest -stack-dir .stack/test $(BENCH_FLAGS)

# The ad-upload queue benchmark (docs/BENCHMARKS.md, "Ad-upload queue"): matcher, uploader and the
# fake Google next to the Google client alone, on the test stack. BENCH_FLAGS passes flags to
# bench/upload, e.g. BENCH_FLAGS='-upload-events 5000'.
.PHONY: bench-upload
bench-upload: tools stack-test ## Ad-upload queue benchmark: verified events to validated rows, vs the Google client alone
	eval "$$($(TEST_STACK) env)"; export REVTRACK_KAFKA_BROKERS REVTRACK_CLICKHOUSE_ADDR REVTRACK_CLICKHOUSE_USERNAME REVTRACK_CLICKHOUSE_PASSWORD REVTRACK_REDIS_ADDR; \
	$(GO) build -o bin/bench-upload ./bench/upload && bin/bench-upload -stack-dir .stack/test $(BENCH_FLAGS)

# The reporting benchmark (docs/BENCHMARKS.md): loads the benchmark data set through the real sync
# into its own stack (STACK_NAME=bench: Kafka 39092, ClickHouse 39000, Redis 36379), then times the
# reporting API. BENCH_FLAGS passes flags to bench/query, e.g. BENCH_FLAGS='-reuse' (keep the loaded
# data set) or BENCH_FLAGS='-scale 0.02'. The bench stack stops at the end (its data stays on disk for
# -reuse) unless BENCH_KEEP_STACK=1.
BENCH_STACK := STACK_NAME=bench deploy/local/stack
BENCH_KEEP_STACK ?=
.PHONY: bench-query
bench-query: tools ## Reporting benchmark: 5M transactions through the sync, then summary, metrics and customers latency
	$(BENCH_STACK) up
	eval "$$($(BENCH_STACK) env)"; export REVTRACK_KAFKA_BROKERS REVTRACK_CLICKHOUSE_ADDR REVTRACK_CLICKHOUSE_USERNAME REVTRACK_CLICKHOUSE_PASSWORD REVTRACK_REDIS_ADDR; \
	status=0; $(GO) build -o bin/bench-query ./bench/query && bin/bench-query -stack-dir .stack/bench $(BENCH_FLAGS) || status=$$?; \
	if [ -z "$(BENCH_KEEP_STACK)" ]; then $(BENCH_STACK) down; fi; exit $$status

# The fault suite (tests/faults/README.md): kills and restarts Kafka, ClickHouse and Redis, so it runs
# on its own stack (STACK_NAME=faults: Kafka 49092, ClickHouse 49000, Redis 46379), never the shared
# test stack, with each component a process of bin/revtrack. FAULTS_FLAGS passes flags to tests/faults,
# e.g. FAULTS_FLAGS='-only kafka,process'. The report also goes to bin/faults-report.md, the components'
# logs to bin/faults-logs. The suite starts the faults stack and stops it at the end (one run at a time)
# unless FAULTS_KEEP_STACK=1.
FAULTS_FLAGS ?=
FAULTS_KEEP_STACK ?=
.PHONY: test-faults
test-faults: tools build ## Fault suite: kill -9/SIGTERM each component, kill each service under load; lost, doubled, slow events
	$(GO) build -o bin/faults ./tests/faults
	bin/faults -bin $(BIN) -stack-dir .stack/faults -report bin/faults-report.md -stack-down=$(if $(FAULTS_KEEP_STACK),false,true) $(FAULTS_FLAGS)

clean: ## Remove build output
	rm -rf bin

# The local cluster (deploy/README.md, "Local cluster"): ZooKeeper, ClickHouse 2 shards x 2 replicas,
# 3 Kafka brokers, Redis Cluster of 3 primaries, on ports 5xxxx beside the single-node stacks.
# cluster-stack-test checks the shape itself (tests/cluster): replication, a broker down, the slots.
CLUSTER_STACK := deploy/local/stack
.PHONY: cluster-up cluster-down cluster-stack-test
cluster-up: ## Start the local cluster (deploy/local/stack up --cluster; ~3.5 GiB)
	$(CLUSTER_STACK) up --cluster

cluster-down: ## Stop the local cluster (its data stays under .stack/cluster)
	$(CLUSTER_STACK) down --cluster

cluster-stack-test: cluster-up ## Check the local cluster: a replicated insert, a Kafka broker down, Redis slots on 3 primaries
	eval "$$($(CLUSTER_STACK) env --cluster)"; REVTRACK_CLUSTER_TESTS=1 $(GO) test -count=1 -v ./tests/cluster/

# The tests on the cluster (tests/cluster/README.md): the shape checks above, the full pipeline on the
# cluster against the single-node test stack (same data, same REST answers), the steady load with a
# Kafka broker, a ClickHouse replica and a Redis primary stopped in turn, and the cost of cluster mode;
# then the packages' own cluster tests (cluster DDL and sharding, subqueries local against GLOBAL, the
# backfill, retention on the local tables, per-workspace analyst databases: deploy/README.md) and the
# Redis paths on the Redis Cluster (tests/rediscluster).
# Starts the cluster and the test stack when they are down; leaves them running.
.PHONY: test-cluster
test-cluster: cluster-up ## Tests on the local cluster: same answers as single node, node faults under load, cost
	STACK_NAME=test $(CLUSTER_STACK) up
	$(GO) build -o bin/cluster-test/revtrack ./cmd/revtrack
	eval "$$($(CLUSTER_STACK) env --cluster)"; REVTRACK_CLUSTER_TESTS=1 REVTRACK_CLUSTER_BIN=$(CURDIR)/bin/cluster-test/revtrack \
		$(GO) test -count=1 -v -timeout 20m ./tests/cluster/ 2>&1 | tee bin/cluster-test/report.txt; exit $${PIPESTATUS[0]}
	eval "$$($(CLUSTER_STACK) env --cluster)"; REVTRACK_CLUSTER_TESTS=1 $(GO) test -count=1 -timeout 15m -run TestCluster \
		./schemas/ ./schemas/reportingbackfill/ ./processors/ ./controlplane/analystaccess/ ./tests/rediscluster/
