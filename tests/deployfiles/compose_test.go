package deployfiles_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"go.yaml.in/yaml/v4"
)

// composeFile is the part of the Compose specification the deployment examples use.
type composeFile struct {
	Services map[string]service `yaml:"services"`
	Volumes  map[string]any     `yaml:"volumes"`
	Configs  map[string]struct {
		File    string `yaml:"file"`
		Content string `yaml:"content"`
	} `yaml:"configs"`
	// dir is where relative paths in the file start (the file's folder, Compose's project folder).
	dir string
	raw string
}

type service struct {
	Image       string               `yaml:"image"`
	Hostname    string               `yaml:"hostname"`
	Command     []string             `yaml:"command"`
	Entrypoint  []string             `yaml:"entrypoint"`
	Environment map[string]any       `yaml:"environment"`
	DependsOn   map[string]dependsOn `yaml:"depends_on"`
	Volumes     []string             `yaml:"volumes"`
	Configs     []struct {
		Source string `yaml:"source"`
		Target string `yaml:"target"`
	} `yaml:"configs"`
	Restart     string         `yaml:"restart"`
	Healthcheck map[string]any `yaml:"healthcheck"`
	Ports       []string       `yaml:"ports"`
	Deploy      struct {
		Replicas int `yaml:"replicas"`
	} `yaml:"deploy"`
}

type dependsOn struct {
	Condition string `yaml:"condition"`
}

// deployDir is the repository's deploy/ folder, found from this file so the test runs from any folder.
func deployDir(t testing.TB) string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("cannot locate the test file")
	}
	return filepath.Join(filepath.Dir(file), "..", "..", "deploy")
}

// loadCompose parses a Compose file (anchors and merge keys resolved by the YAML decoder).
func loadCompose(t testing.TB, name string) composeFile {
	t.Helper()
	path := filepath.Join(deployDir(t), name)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f composeFile
	if err := yaml.Unmarshal(b, &f); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if len(f.Services) == 0 {
		t.Fatalf("%s: no services", name)
	}
	f.dir, f.raw = filepath.Dir(path), string(b)
	return f
}

// sampleSecrets stand for the variables an operator supplies: the values only need the right shape.
var sampleSecrets = map[string]string{
	"ENCRYPTION_KEYS": "k1:" + "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=",
}

var interpolation = regexp.MustCompile(`\$\{([A-Z0-9_]+)(?::?([-?])([^}]*))?\}`)

// interpolate resolves Compose's ${VAR:-default} to the default and ${VAR:?message} to a sample
// value, as an operator's deploy/.env would; $$ is a literal $.
func interpolate(s string) string {
	s = strings.ReplaceAll(s, "$$", "\x00")
	s = interpolation.ReplaceAllStringFunc(s, func(m string) string {
		p := interpolation.FindStringSubmatch(m)
		if p[2] == "-" {
			return p[3]
		}
		return sampleValue(p[1])
	})
	return strings.ReplaceAll(s, "\x00", "$")
}

// sampleValue stands for the operator's value of a variable.
func sampleValue(name string) string {
	if v := sampleSecrets[name]; v != "" {
		return v
	}
	return "sample-" + strings.ToLower(name)
}

// env is a service's environment with interpolation applied.
func (s service) env() map[string]string {
	out := map[string]string{}
	for k, v := range s.Environment {
		out[k] = interpolate(fmt.Sprint(v))
	}
	return out
}

func (s service) isRevtrack() bool { return strings.HasPrefix(s.Image, "revtrack:") }

// servicesWithImage lists the services running an image of the given repository, sorted by name.
func (f composeFile) servicesWithImage(repo string) []string {
	var names []string
	for name, s := range f.Services {
		if strings.HasPrefix(s.Image, repo+":") {
			names = append(names, name)
		}
	}
	sortStrings(names)
	return names
}

// configFile returns the text of a top-level config (inline or from its file).
func (f composeFile) configFile(t testing.TB, name string) string {
	t.Helper()
	c, ok := f.Configs[name]
	if !ok {
		t.Fatalf("no config %q", name)
	}
	if c.File == "" {
		return c.Content
	}
	b, err := os.ReadFile(filepath.Join(f.dir, c.File))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// mountedConfig returns the config a service mounts at target.
func (s service) mountedConfig(target string) string {
	for _, c := range s.Configs {
		if c.Target == target {
			return c.Source
		}
	}
	return ""
}

var composeFiles = []string{"docker-compose.yml", "docker-compose.cluster.yml"}
