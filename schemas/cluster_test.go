package schemas

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/revtrack/revtrack/internal/testenv"
)

var goldenCluster = Cluster{Name: "revtrack", Database: "revtrack"}

// TestClusterDDLGolden records the cluster statements of every migration (schemas/testdata/cluster),
// so that a change to what a cluster runs is reviewed like a migration.
func TestClusterDDLGolden(t *testing.T) {
	ms, err := Migrations()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		st, err := clusterStatements(goldenCluster, m)
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Join(st, ";\n\n") + ";\n"
		testenv.Golden(t, filepath.Join("testdata", "cluster", fmt.Sprintf("%04d_%s.sql", m.Version, m.Name)), []byte(got))
	}
	ddl, err := goldenCluster.ClusterDDL(MigrationsTableDDL)
	if err != nil {
		t.Fatal(err)
	}
	testenv.Golden(t, filepath.Join("testdata", "cluster", "schema_migrations.sql"), []byte(strings.Join(ddl, ";\n\n")+";\n"))
}

var createdTableRe = regexp.MustCompile(`(?m)^CREATE TABLE IF NOT EXISTS (\w+)`)

// TestClusterPlacementCoversEveryTable: every table a migration creates has a placement, and every
// placement names a table that exists, so the map cannot drift from the migrations.
func TestClusterPlacementCoversEveryTable(t *testing.T) {
	st, err := MigrationStatements()
	if err != nil {
		t.Fatal(err)
	}
	created := map[string]bool{migrationsTable: true}
	for _, s := range st {
		if m := createdTableRe.FindStringSubmatch(s); m != nil {
			created[m[1]] = true
			if _, ok := clusterPlacements[m[1]]; !ok {
				t.Errorf("table %s has no cluster placement (schemas/cluster_keys.go)", m[1])
			}
		}
	}
	for name := range clusterPlacements {
		if !created[name] {
			t.Errorf("placement for %s, which no migration creates", name)
		}
	}
}

// keyColumnRe finds the identifiers a sharding key reads.
var keyColumnRe = regexp.MustCompile(`\b([a-z_]+)\b`)

var keyFunctions = map[string]bool{"cityHash64": true, "concat": true, "lower": true, "hex": true, "substring": true, "SHA256": true, "cus_": true, "x1f": true}

func keyColumns(key string) []string {
	var out []string
	for _, m := range keyColumnRe.FindAllStringSubmatch(strings.ReplaceAll(key, `'\x1f'`, ""), -1) {
		if !keyFunctions[m[1]] && m[1] != "cus_" {
			out = append(out, m[1])
		}
	}
	return out
}

// TestClusterViewsKeepTheirShard proves, for every materialized view, that the rows it writes on a
// node belong on that node: the target's sharding key, evaluated on a row the view writes, equals
// the source's key on the row it came from. Each of the target key's columns is either copied
// unchanged from the source column of the same name that the source's key reads, or is public_id
// computed by the public-ID expression from app_id and customer_id (the source key's inputs).
func TestClusterViewsKeepTheirShard(t *testing.T) {
	st, err := MigrationStatements()
	if err != nil {
		t.Fatal(err)
	}
	views := 0
	for _, s := range st {
		m := createMVRe.FindStringSubmatch(s)
		if m == nil {
			continue
		}
		views++
		name, target, body := m[1], m[2], m[3]
		source := mvSourceRe.FindStringSubmatch(body)[1]
		sp, tp := clusterPlacements[source], clusterPlacements[target]
		if sp.Unit != tp.Unit {
			t.Errorf("%s: %s is sharded by %s, %s by %s", name, source, sp.Unit, target, tp.Unit)
			continue
		}
		if sp.Key == tp.Key {
			for _, col := range keyColumns(tp.Key) {
				if !selectsColumnUnchanged(body, col) {
					t.Errorf("%s: key column %s is not copied unchanged from %s", name, col, source)
				}
			}
			continue
		}
		if sp.Key != byCustomerIDs.Key || tp.Key != byPublicID.Key {
			t.Errorf("%s: keys %q and %q are not known to agree", name, sp.Key, tp.Key)
			continue
		}
		if !strings.Contains(body, publicIDExpr+" AS public_id") {
			t.Errorf("%s: public_id is not the public-ID expression of the source's app_id and customer_id", name)
		}
	}
	if views < 10 {
		t.Fatalf("found %d materialized views; the parser misses some", views)
	}
}

// selectsColumnUnchanged says whether the view's SELECT list names col bare (not as an alias of
// an expression).
func selectsColumnUnchanged(body, col string) bool {
	list := body[len("SELECT"):strings.Index(body, "\nFROM ")]
	for _, item := range strings.Split(list, ",") {
		if strings.TrimSpace(item) == col {
			return true
		}
	}
	return false
}

// TestClusterDDLRefusesUnknownForms: a statement the rewrite does not know fails, rather than
// running unsharded on one node.
func TestClusterDDLRefusesUnknownForms(t *testing.T) {
	for _, st := range []string{
		"CREATE TABLE IF NOT EXISTS nowhere (a String) ENGINE = ReplacingMergeTree ORDER BY a",
		"CREATE TABLE IF NOT EXISTS workspaces (a String) ENGINE = Log",
		"DROP TABLE workspaces",
		"ALTER TABLE nowhere ADD COLUMN a String",
		"CREATE MATERIALIZED VIEW IF NOT EXISTS v TO acquisitions AS\nSELECT source_id FROM server_events",
	} {
		if _, err := goldenCluster.ClusterDDL(st); err == nil {
			t.Errorf("accepted %q", st)
		}
	}
}

// TestAddColumnOnClusterIsRecognised: a cluster ADD COLUMN re-run after a crash is forgiven like a
// single node's.
func TestAddColumnOnClusterIsRecognised(t *testing.T) {
	if !addColumnRe.MatchString("ALTER TABLE revtrack.api_keys_local ON CLUSTER revtrack ADD COLUMN scope String") {
		t.Fatal("ON CLUSTER ADD COLUMN not recognised")
	}
}
