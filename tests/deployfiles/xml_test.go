package deployfiles_test

import (
	"encoding/xml"
	"strings"
	"testing"
)

// xnode is any XML element, for reading ClickHouse's configuration files.
type xnode struct {
	XMLName  xml.Name
	Attrs    []xml.Attr `xml:",any,attr"`
	Text     string     `xml:",chardata"`
	Children []xnode    `xml:",any"`
}

func parseXML(t testing.TB, name, text string) xnode {
	t.Helper()
	var n xnode
	if err := xml.Unmarshal([]byte(text), &n); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if n.XMLName.Local != "clickhouse" {
		t.Errorf("%s: root element <%s>, current ClickHouse's is <clickhouse>", name, n.XMLName.Local)
	}
	return n
}

// all returns the children named name.
func (n xnode) all(name string) []xnode {
	var out []xnode
	for _, c := range n.Children {
		if c.XMLName.Local == name {
			out = append(out, c)
		}
	}
	return out
}

// at follows a slash-separated path of first children; a missing one is the zero node.
func (n xnode) at(path string) xnode {
	for _, p := range strings.Split(path, "/") {
		found := false
		for _, c := range n.Children {
			if c.XMLName.Local == p {
				n, found = c, true
				break
			}
		}
		if !found {
			return xnode{}
		}
	}
	return n
}

func (n xnode) text() string { return strings.TrimSpace(n.Text) }

func (n xnode) attr(name string) string {
	for _, a := range n.Attrs {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

// value is the element's text, or the variable it is read from (from_env) resolved in env.
func (n xnode) value(env map[string]string) string {
	if v := n.attr("from_env"); v != "" {
		return env[v]
	}
	return n.text()
}
