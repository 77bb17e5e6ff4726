package analystaccess

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"
)

// snapshotView in a workspace database tells its analysts when the copy was taken.
const snapshotView = "analyst_snapshot"

// copyableEngine: on a single node a copy is made with CREATE TABLE … AS, which repeats the
// engine. A replicated or Distributed source would give a table that shares the source's
// replication path or reads every workspace's rows, so there those are refused; cluster mode copies
// them its own way (cluster.go).
var copyableEngine = regexp.MustCompile(`^(Replacing|Aggregating|Summing|Collapsing|VersionedCollapsing)?MergeTree$`)

var identRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// source is what a workspace database reproduces: the analyst_* views of the service's database
// and the tables they read, as found in system.tables at refresh time (so a migration that changes
// a view or adds one is followed at the next refresh).
type source struct {
	views  map[string]string // name -> CREATE VIEW statement
	order  []string          // views, each after the views it reads
	tables []string          // the tables the views read
	// workspaceScoped are the tables with a workspace_id column.
	workspaceScoped map[string]bool
	// On a cluster: the table whose engine each table's copy repeats (copyFrom), and the engines
	// of the service's database (engineFull).
	copyFrom   map[string]string
	engineFull map[string]string
}

// refPattern finds database-qualified names in a stored CREATE statement (18.16 and current
// ClickHouse qualify every table a view reads).
func refPattern(db string) *regexp.Regexp {
	return regexp.MustCompile(`(^|[^A-Za-z0-9_.` + "`" + `])` + regexp.QuoteMeta(db) + `\.([A-Za-z_][A-Za-z0-9_]*)`)
}

func (m *Manager) source(ctx context.Context) (source, error) {
	src := m.ClickHouse.Database
	rows, err := m.Conn.Query(ctx, "SELECT name, engine, engine_full, create_table_query FROM system.tables WHERE database = ?", src)
	if err != nil {
		return source{}, fmt.Errorf("list the analyst views: %w", err)
	}
	engines := map[string]string{}
	s := source{views: map[string]string{}, workspaceScoped: map[string]bool{}, copyFrom: map[string]string{}, engineFull: map[string]string{}}
	for rows.Next() {
		var name, engine, engineFull, create string
		if err := rows.Scan(&name, &engine, &engineFull, &create); err != nil {
			rows.Close()
			return source{}, err
		}
		engines[name], s.engineFull[name] = engine, engineFull
		if engine == "View" && strings.HasPrefix(name, "analyst_") {
			s.views[name] = create
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return source{}, err
	}
	if len(s.views) == 0 {
		return source{}, fmt.Errorf("database %s has no analyst_* views: are the migrations applied?", src)
	}
	re := refPattern(src)
	deps := map[string][]string{}
	tables := map[string]bool{}
	for v, create := range s.views {
		for _, mt := range re.FindAllStringSubmatch(create, -1) {
			ref := mt[2]
			switch {
			case ref == v:
			case engines[ref] == "View" && strings.HasPrefix(ref, "analyst_"):
				deps[v] = append(deps[v], ref)
			case engines[ref] == "View" || engines[ref] == "":
				return source{}, fmt.Errorf("view %s reads %s.%s, which is neither an analyst view nor a table", v, src, ref)
			case m.ClickHouse.Cluster != "":
				from, err := clusterCopySource(engines, ref)
				if err != nil {
					return source{}, fmt.Errorf("view %s: %w", v, err)
				}
				s.copyFrom[ref] = from
				tables[ref] = true
			default:
				if !copyableEngine.MatchString(engines[ref]) {
					return source{}, fmt.Errorf("view %s reads %s (engine %s), which a workspace copy cannot reproduce", v, ref, engines[ref])
				}
				tables[ref] = true
			}
		}
	}
	for t := range tables {
		s.tables = append(s.tables, t)
	}
	sort.Strings(s.tables)
	if s.order, err = viewOrder(s.views, deps); err != nil {
		return source{}, err
	}
	rows, err = m.Conn.Query(ctx, "SELECT DISTINCT table FROM system.columns WHERE database = ? AND name = 'workspace_id'", src)
	if err != nil {
		return source{}, err
	}
	defer rows.Close()
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			return source{}, err
		}
		s.workspaceScoped[t] = true
	}
	return s, rows.Err()
}

// viewOrder sorts the views so that each comes after those it reads: CREATE VIEW needs them.
func viewOrder(views map[string]string, deps map[string][]string) ([]string, error) {
	names := make([]string, 0, len(views))
	for v := range views {
		names = append(names, v)
	}
	sort.Strings(names)
	var order []string
	state := map[string]int{} // 1 visiting, 2 done
	var visit func(string) error
	visit = func(v string) error {
		switch state[v] {
		case 1:
			return fmt.Errorf("analyst views read each other in a cycle at %s", v)
		case 2:
			return nil
		}
		state[v] = 1
		for _, d := range deps[v] {
			if err := visit(d); err != nil {
				return err
			}
		}
		state[v] = 2
		order = append(order, v)
		return nil
	}
	for _, v := range names {
		if err := visit(v); err != nil {
			return nil, err
		}
	}
	return order, nil
}

// copyFilter is the condition that keeps the workspace's rows of a table. apps has no workspace:
// the workspace's apps are those it selected and those its platform data names.
func (m *Manager) copyFilter(s source, table, ws string) (string, error) {
	lit := "'" + ws + "'" // ws matched workspaceIDRe: no quote or backslash
	src := m.ClickHouse.Database
	switch {
	case s.workspaceScoped[table]:
		return "workspace_id = " + lit, nil
	case table == "apps":
		return fmt.Sprintf(`app_id IN (SELECT arrayJoin(selected) FROM (SELECT argMax(selected_app_ids, version) AS selected
    FROM %[1]s.workspaces WHERE workspace_id = %[2]s)) OR app_id IN (SELECT app_id FROM %[1]s.platform_customers WHERE workspace_id = %[2]s)`,
			src, lit), nil
	}
	return "", fmt.Errorf("table %s has no workspace_id: a workspace copy cannot tell its rows", table)
}

func suffix() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// refresh brings the workspace database db up to date: a fresh copy of each table (built beside
// the current one and swapped in, so readers see the old copy or the new one), the views created or
// replaced where their definition changed, objects no longer part of the surface dropped, and the
// snapshot time. The caller holds the workspace's lock.
func (m *Manager) refresh(ctx context.Context, ws, db string) (time.Time, error) {
	if !identRe.MatchString(db) {
		return time.Time{}, fmt.Errorf("analyst database %q is not a plain identifier", db)
	}
	start := m.clock().UTC().Truncate(time.Second)
	s, err := m.source(ctx)
	if err != nil {
		return time.Time{}, err
	}
	if err := m.Conn.Exec(ctx, "CREATE DATABASE IF NOT EXISTS "+db+m.on()); err != nil {
		return time.Time{}, fmt.Errorf("create analyst database: %w", err)
	}
	existing, err := m.objects(ctx, db)
	if err != nil {
		return time.Time{}, err
	}
	// Leftovers of an interrupted refresh; nothing else builds here while the lock is held.
	for name := range existing {
		if strings.Contains(name, "__new_") || strings.Contains(name, "__old_") {
			if err := m.Conn.Exec(ctx, "DROP TABLE IF EXISTS "+db+"."+name+m.on()); err != nil {
				return time.Time{}, err
			}
			delete(existing, name)
		}
	}
	for _, t := range s.tables {
		if err := m.copyTable(ctx, s, ws, db, t, existing[t] != ""); err != nil {
			return time.Time{}, err
		}
	}
	if err := m.createViews(ctx, s, db, existing); err != nil {
		return time.Time{}, err
	}
	for name := range existing {
		if _, ok := s.views[name]; ok || slices.Contains(s.tables, name) || name == snapshotView {
			continue
		}
		if err := m.Conn.Exec(ctx, "DROP TABLE IF EXISTS "+db+"."+name+m.on()); err != nil {
			return time.Time{}, err
		}
	}
	snap := fmt.Sprintf("SELECT toDateTime(%d, 'UTC') AS refreshed_at", start.Unix())
	if err := m.swapIn(ctx, db, snapshotView, existing[snapshotView] != "", func(name string) error {
		return m.Conn.Exec(ctx, "CREATE VIEW "+db+"."+name+m.on()+" AS "+snap)
	}); err != nil {
		return time.Time{}, err
	}
	return start, nil
}

// objects maps the names in db to their CREATE statements.
func (m *Manager) objects(ctx context.Context, db string) (map[string]string, error) {
	rows, err := m.Conn.Query(ctx, "SELECT name, create_table_query FROM system.tables WHERE database = ?", db)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var name, create string
		if err := rows.Scan(&name, &create); err != nil {
			return nil, err
		}
		out[name] = create
	}
	return out, rows.Err()
}

// swapIn builds name under a temporary name with build and puts it in place of the current one.
func (m *Manager) swapIn(ctx context.Context, db, name string, exists bool, build func(tmp string) error) error {
	sfx := suffix()
	tmp, old := name+"__new_"+sfx, name+"__old_"+sfx
	if err := build(tmp); err != nil {
		_ = m.Conn.Exec(context.WithoutCancel(ctx), "DROP TABLE IF EXISTS "+db+"."+tmp+m.on())
		return err
	}
	rename := "RENAME TABLE " + db + "." + tmp + " TO " + db + "." + name
	if exists {
		rename = "RENAME TABLE " + db + "." + name + " TO " + db + "." + old + ", " + db + "." + tmp + " TO " + db + "." + name
	}
	if err := m.Conn.Exec(ctx, rename+m.on()); err != nil {
		return fmt.Errorf("swap in %s.%s: %w", db, name, err)
	}
	if exists {
		return m.Conn.Exec(ctx, "DROP TABLE IF EXISTS "+db+"."+old+m.on())
	}
	return nil
}

func (m *Manager) copyTable(ctx context.Context, s source, ws, db, table string, exists bool) error {
	if !identRe.MatchString(table) {
		return fmt.Errorf("table name %q is not a plain identifier", table)
	}
	filter, err := m.copyFilter(s, table, ws)
	if err != nil {
		return err
	}
	src := m.ClickHouse.Database + "." + table
	insertCtx, err := m.insertContext(ctx)
	if err != nil {
		return err
	}
	return m.swapIn(ctx, db, table, exists, func(tmp string) error {
		create := func() error { return m.Conn.Exec(ctx, "CREATE TABLE "+db+"."+tmp+" AS "+src) }
		if m.ClickHouse.Cluster != "" {
			create = func() error { return m.createClusterCopy(ctx, s, db, tmp, table) }
		}
		if err := create(); err != nil {
			return fmt.Errorf("copy %s: %w", table, err)
		}
		if err := m.Conn.Exec(insertCtx, "INSERT INTO "+db+"."+tmp+" SELECT * FROM "+src+" WHERE "+filter); err != nil {
			return fmt.Errorf("copy %s: %w", table, err)
		}
		return nil
	})
}

// createViews creates each analyst view in db over db's copies: the source's definition with its
// database replaced. A view whose definition has not changed is left in place; a changed one is
// dropped and created again (its readers see it missing for that moment).
func (m *Manager) createViews(ctx context.Context, s source, db string, existing map[string]string) error {
	src := m.ClickHouse.Database
	re := refPattern(src)
	for _, v := range s.order {
		create := re.ReplaceAllString(s.views[v], "${1}"+db+".${2}")
		if re.MatchString(create) {
			return fmt.Errorf("view %s still reads database %s after the rewrite", v, src)
		}
		if existing[v] == create {
			continue
		}
		if existing[v] != "" {
			if err := m.Conn.Exec(ctx, "DROP TABLE IF EXISTS "+db+"."+v+m.on()); err != nil {
				return err
			}
		}
		stmt, err := m.onClusterView(create)
		if err != nil {
			return err
		}
		if err := m.Conn.Exec(ctx, stmt); err != nil {
			return fmt.Errorf("create view %s.%s: %w", db, v, err)
		}
	}
	return nil
}
