package deployfiles_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"go.yaml.in/yaml/v4"

	"github.com/revtrack/revtrack/cmd/revtrack/config"
	"github.com/revtrack/revtrack/schemas"
)

var kubernetesFiles = []string{"kubernetes/migrate.yaml", "kubernetes/components.yaml"}

// k8sObject is the part of the Kubernetes objects the example uses.
type k8sObject struct {
	Kind     string `yaml:"kind"`
	Metadata struct {
		Name   string            `yaml:"name"`
		Labels map[string]string `yaml:"labels"`
	} `yaml:"metadata"`
	Data map[string]string `yaml:"data"`
	Spec struct {
		Replicas int `yaml:"replicas"`
		Selector struct {
			MatchLabels map[string]string `yaml:"matchLabels"`
		} `yaml:"selector"`
		Template struct {
			Metadata struct {
				Labels map[string]string `yaml:"labels"`
			} `yaml:"metadata"`
			Spec podSpec `yaml:"spec"`
		} `yaml:"template"`
		// Service
		ServiceSelector map[string]string `yaml:"-"`
		Ports           []struct {
			TargetPort string `yaml:"targetPort"`
		} `yaml:"ports"`
	} `yaml:"spec"`
	raw map[string]any
}

type podSpec struct {
	TerminationGracePeriodSeconds int `yaml:"terminationGracePeriodSeconds"`
	Containers                    []struct {
		Image   string   `yaml:"image"`
		Args    []string `yaml:"args"`
		EnvFrom []struct {
			ConfigMapRef struct {
				Name string `yaml:"name"`
			} `yaml:"configMapRef"`
		} `yaml:"envFrom"`
		Env []struct {
			Name      string `yaml:"name"`
			Value     string `yaml:"value"`
			ValueFrom struct {
				SecretKeyRef struct {
					Name string `yaml:"name"`
					Key  string `yaml:"key"`
				} `yaml:"secretKeyRef"`
			} `yaml:"valueFrom"`
		} `yaml:"env"`
		Ports []struct {
			Name          string `yaml:"name"`
			ContainerPort int    `yaml:"containerPort"`
		} `yaml:"ports"`
		LivenessProbe  probe `yaml:"livenessProbe"`
		ReadinessProbe probe `yaml:"readinessProbe"`
	} `yaml:"containers"`
}

type probe struct {
	HTTPGet struct {
		Path string `yaml:"path"`
		Port string `yaml:"port"`
	} `yaml:"httpGet"`
}

// loadKubernetes reads every object of the example's files, and their text.
func loadKubernetes(t testing.TB) ([]k8sObject, string) {
	t.Helper()
	var objs []k8sObject
	var text strings.Builder
	for _, name := range kubernetesFiles {
		b, err := os.ReadFile(filepath.Join(deployDir(t), name))
		if err != nil {
			t.Fatal(err)
		}
		text.Write(b)
		dec := yaml.NewDecoder(bytes.NewReader(b))
		for {
			var n yaml.Node
			if err := dec.Decode(&n); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			var o k8sObject
			if err := n.Decode(&o); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if err := n.Decode(&o.raw); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if o.Kind == "Service" {
				spec, _ := o.raw["spec"].(map[string]any)
				sel, _ := spec["selector"].(map[string]any)
				o.Spec.ServiceSelector = map[string]string{}
				for k, v := range sel {
					o.Spec.ServiceSelector[k], _ = v.(string)
				}
			}
			objs = append(objs, o)
		}
	}
	return objs, text.String()
}

var fromLiteral = regexp.MustCompile(`--from-literal=([a-z-]+)=`)

// TestKubernetesExample: the Kubernetes example runs the same cluster mode as the Compose file
// (cluster name, replication factor, Redis Cluster), every REVTRACK_* name is a variable of the
// binary and each container's settings pass its validation, each container runs a revtrack
// command, the ConfigMap and Secret keys it reads exist or are created by the documented command,
// the probes are /healthz and /readyz on the HTTP port, the grace period outlasts the HTTP drain,
// each Service selects one Deployment's pods, and the consumers stay within their partitions.
func TestKubernetesExample(t *testing.T) {
	objs, text := loadKubernetes(t)
	env, root := binaryEnv()
	for _, m := range revtrackVars(text) {
		if _, ok := env[m]; !ok {
			t.Errorf("%s is not a variable of the revtrack binary", m)
		}
	}
	secretKeys := map[string]bool{}
	for _, m := range fromLiteral.FindAllStringSubmatch(text, -1) {
		secretKeys[m[1]] = true
	}
	configMaps := map[string]map[string]string{}
	for _, o := range objs {
		if o.Kind == "ConfigMap" {
			configMaps[o.Metadata.Name] = o.Data
		}
	}
	compose := revtrackEnv(t, loadCompose(t, clusterFile))
	for _, k := range []string{"REVTRACK_CLICKHOUSE_CLUSTER", "REVTRACK_KAFKA_REPLICATION_FACTOR", "REVTRACK_REDIS_CLUSTER", "REVTRACK_AUTO_MIGRATE", "REVTRACK_HTTP_ADDR"} {
		for name, data := range configMaps {
			if data[k] != compose[k] {
				t.Errorf("ConfigMap %s: %s=%q, the cluster Compose file has %q", name, k, data[k], compose[k])
			}
		}
	}
	partitions := map[string]int32{}
	for _, tp := range schemas.Topics() {
		partitions[tp.Name] = tp.Partitions
	}
	maxReplicas := map[string]int32{"process": partitions[schemas.TopicBrowserEvents], "upload": partitions[schemas.TopicUploadJobs]}

	deployments := map[string]k8sObject{}
	for _, o := range objs {
		if o.Kind != "Job" && o.Kind != "Deployment" {
			continue
		}
		pod := o.Spec.Template.Spec
		for _, c := range pod.Containers {
			cmd, _, err := root.Find(c.Args)
			if err != nil || cmd == root {
				t.Errorf("%s runs %v, which is no revtrack command", o.Metadata.Name, c.Args)
				continue
			}
			vars := map[string]string{}
			for _, ef := range c.EnvFrom {
				data, ok := configMaps[ef.ConfigMapRef.Name]
				if !ok {
					t.Errorf("%s reads ConfigMap %q, which the example does not define", o.Metadata.Name, ef.ConfigMapRef.Name)
				}
				for k, v := range data {
					vars[k] = v
				}
			}
			for _, e := range c.Env {
				vars[e.Name] = e.Value
				if ref := e.ValueFrom.SecretKeyRef; ref.Key != "" {
					if !secretKeys[ref.Key] || ref.Name != "revtrack-secrets" {
						t.Errorf("%s reads secret %s/%s, which the documented command does not create", o.Metadata.Name, ref.Name, ref.Key)
					}
					vars[e.Name] = sampleValue(strings.ToUpper(strings.ReplaceAll(ref.Key, "-", "_")))
				}
			}
			cfg := config.Default()
			fs := pflag.NewFlagSet(o.Metadata.Name, pflag.ContinueOnError)
			cfg.RegisterFlags(fs)
			for k, v := range vars {
				if f := fs.Lookup(env[k]); f != nil {
					if err := fs.Set(f.Name, v); err != nil {
						t.Errorf("%s: %s=%q: %v", o.Metadata.Name, k, v, err)
					}
				}
			}
			if err := cfg.Validate(); err != nil {
				t.Errorf("%s: the binary refuses the settings: %v", o.Metadata.Name, err)
			}
			if o.Kind == "Job" {
				continue
			}
			deployments[o.Metadata.Name] = o
			if err := cfg.CheckServerKeys(); err != nil {
				t.Errorf("%s: %v", o.Metadata.Name, err)
			}
			if time.Duration(pod.TerminationGracePeriodSeconds)*time.Second <= cfg.HTTP.ShutdownTimeout {
				t.Errorf("%s: terminationGracePeriodSeconds %d does not outlast the HTTP drain (%s)", o.Metadata.Name, pod.TerminationGracePeriodSeconds, cfg.HTTP.ShutdownTimeout)
			}
			_, port, _ := strings.Cut(cfg.HTTP.Addr, ":")
			var named string
			for _, p := range c.Ports {
				if strconv.Itoa(p.ContainerPort) == port {
					named = p.Name
				}
			}
			if named == "" || c.LivenessProbe.HTTPGet.Path != "/healthz" || c.ReadinessProbe.HTTPGet.Path != "/readyz" ||
				c.LivenessProbe.HTTPGet.Port != named || c.ReadinessProbe.HTTPGet.Port != named {
				t.Errorf("%s: probes %+v / %+v, want /healthz and /readyz on the HTTP port %s", o.Metadata.Name, c.LivenessProbe, c.ReadinessProbe, port)
			}
			if max, ok := maxReplicas[c.Args[0]]; ok && int32(o.Spec.Replicas) > max {
				t.Errorf("%s: %d replicas, but only %d partitions to share", o.Metadata.Name, o.Spec.Replicas, max)
			}
		}
		if o.Kind == "Deployment" && !subset(o.Spec.Selector.MatchLabels, o.Spec.Template.Metadata.Labels) {
			t.Errorf("%s: its selector does not match its pods' labels", o.Metadata.Name)
		}
	}
	for _, o := range objs {
		if o.Kind != "Service" {
			continue
		}
		var selected []string
		for name, d := range deployments {
			if subset(o.Spec.ServiceSelector, d.Spec.Template.Metadata.Labels) {
				selected = append(selected, name)
			}
		}
		if len(selected) != 1 {
			t.Errorf("Service %s selects the pods of %v, want one Deployment", o.Metadata.Name, selected)
			continue
		}
		for _, p := range o.Spec.Ports {
			found := false
			for _, c := range deployments[selected[0]].Spec.Template.Spec.Containers {
				for _, cp := range c.Ports {
					found = found || cp.Name == p.TargetPort
				}
			}
			if !found {
				t.Errorf("Service %s: targetPort %q is no named port of %s", o.Metadata.Name, p.TargetPort, selected[0])
			}
		}
	}
}

// TestComposeConsumersWithinPartitions: the Compose files run no more consumers than partitions.
func TestComposeConsumersWithinPartitions(t *testing.T) {
	partitions := map[string]int32{}
	for _, tp := range schemas.Topics() {
		partitions[tp.Name] = tp.Partitions
	}
	maxReplicas := map[string]int32{"process": partitions[schemas.TopicBrowserEvents], "upload": partitions[schemas.TopicUploadJobs]}
	for _, name := range composeFiles {
		for sname, s := range loadCompose(t, name).Services {
			if max, ok := maxReplicas[sname]; ok && int32(s.Deploy.Replicas) > max {
				t.Errorf("%s: %s has %d replicas for %d partitions", name, sname, s.Deploy.Replicas, max)
			}
		}
	}
}

func subset(sel, labels map[string]string) bool {
	if len(sel) == 0 {
		return false
	}
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return true
}
