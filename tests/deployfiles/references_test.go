package deployfiles_test

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

func sortStrings(s []string) { sort.Strings(s) }

// TestComposeReferencesResolve: in both Compose files every depends_on names a service able to meet
// its condition, every named volume and config is declared (and every declared one is used), and
// every config file exists.
func TestComposeReferencesResolve(t *testing.T) {
	for _, name := range composeFiles {
		t.Run(name, func(t *testing.T) {
			f := loadCompose(t, name)
			usedVolumes, usedConfigs := map[string]bool{}, map[string]bool{}
			for sname, s := range f.Services {
				for dep, d := range s.DependsOn {
					target, ok := f.Services[dep]
					switch {
					case !ok:
						t.Errorf("%s depends on %q, which is no service", sname, dep)
					case d.Condition == "service_healthy" && target.Healthcheck == nil:
						t.Errorf("%s waits for %s to be healthy, which has no healthcheck", sname, dep)
					case d.Condition == "service_completed_successfully" && (target.Restart == "always" || target.Restart == "unless-stopped"):
						t.Errorf("%s waits for %s to complete, which restarts whatever its exit", sname, dep)
					case d.Condition != "service_healthy" && d.Condition != "service_completed_successfully" && d.Condition != "service_started":
						t.Errorf("%s depends on %s with condition %q", sname, dep, d.Condition)
					}
				}
				for _, v := range s.Volumes {
					src, _, ok := strings.Cut(v, ":")
					if !ok {
						t.Errorf("%s: volume %q has no target", sname, v)
						continue
					}
					if strings.HasPrefix(src, ".") || strings.HasPrefix(src, "/") {
						if _, err := os.Stat(filepath.Join(f.dir, src)); err != nil {
							t.Errorf("%s: bind mount %q: %v", sname, src, err)
						}
						continue
					}
					usedVolumes[src] = true
					if _, ok := f.Volumes[src]; !ok {
						t.Errorf("%s mounts volume %q, which is not declared", sname, src)
					}
				}
				for _, c := range s.Configs {
					usedConfigs[c.Source] = true
					if _, ok := f.Configs[c.Source]; !ok {
						t.Errorf("%s mounts config %q, which is not declared", sname, c.Source)
					}
				}
			}
			for v := range f.Volumes {
				if !usedVolumes[v] {
					t.Errorf("volume %q is declared but no service mounts it", v)
				}
			}
			for c, def := range f.Configs {
				if !usedConfigs[c] {
					t.Errorf("config %q is declared but no service mounts it", c)
				}
				if def.File == "" && def.Content == "" {
					t.Errorf("config %q has neither file nor content", c)
				}
				if def.File != "" {
					if _, err := os.Stat(filepath.Join(f.dir, def.File)); err != nil {
						t.Errorf("config %q: %v", c, err)
					}
				}
			}
		})
	}
}

// TestComposeServicesRunTheSameWay: the cluster file keeps the single-node file's conventions for
// revtrack (the same components and commands, the same published ports, the one-shot migrate the
// components wait for) and the same images for Kafka, ClickHouse and Redis.
func TestComposeServicesRunTheSameWay(t *testing.T) {
	single, cluster := loadCompose(t, composeFiles[0]), loadCompose(t, composeFiles[1])
	for name, s := range single.Services {
		if !s.isRevtrack() {
			continue
		}
		c, ok := cluster.Services[name]
		if !ok {
			t.Errorf("the cluster file has no %s", name)
			continue
		}
		if strings.Join(c.Command, " ") != strings.Join(s.Command, " ") || strings.Join(c.Ports, ",") != strings.Join(s.Ports, ",") {
			t.Errorf("%s: command %v ports %v in the cluster file, %v %v in the single-node file", name, c.Command, c.Ports, s.Command, s.Ports)
		}
		if name != "migrate" && c.DependsOn["migrate"].Condition != "service_completed_successfully" {
			t.Errorf("%s does not wait for migrate to complete", name)
		}
	}
	images := map[string]bool{}
	for _, s := range single.Services {
		images[s.Image] = true
	}
	for name, s := range cluster.Services {
		repo, _, _ := strings.Cut(s.Image, ":")
		if repo == "clickhouse/clickhouse-keeper" {
			// The Keeper release is the server's (same version, same protocol).
			s.Image = "clickhouse/clickhouse-server:" + strings.TrimPrefix(s.Image, repo+":")
		}
		if !images[s.Image] {
			t.Errorf("%s runs %s, which the single-node file does not", name, s.Image)
		}
	}
}
