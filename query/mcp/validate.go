package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// argValidator checks a tool's arguments against its input schema before the tool runs, and words
// each violation for the model ("/customerScope: value must be one of 'included', 'excluded',
// 'all'"), so it can correct the call. (mcp-go's own validation prints the validator's Go structs.)
type argValidator struct {
	schema *jsonschema.Schema
	// accepted names the tool's arguments, for the message about an unknown one.
	accepted string
}

var printer = message.NewPrinter(language.English)

func newArgValidator(name string, schema json.RawMessage) *argValidator {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		panic(fmt.Sprintf("tool %s: input schema: %v", name, err)) // derived from a static struct
	}
	c := jsonschema.NewCompiler()
	url := "mem:///tools/" + name + ".json"
	if err := c.AddResource(url, doc); err != nil {
		panic(fmt.Sprintf("tool %s: input schema: %v", name, err))
	}
	s, err := c.Compile(url)
	if err != nil {
		panic(fmt.Sprintf("tool %s: input schema: %v", name, err))
	}
	var props struct {
		Properties json.RawMessage `json:"properties"`
	}
	_ = json.Unmarshal(schema, &props)
	var names []string
	d := json.NewDecoder(bytes.NewReader(props.Properties))
	for depth := 0; ; {
		tok, err := d.Token()
		if err != nil {
			break
		}
		switch tok := tok.(type) {
		case json.Delim:
			if tok == '{' || tok == '[' {
				depth++
			} else {
				depth--
			}
		case string:
			if depth == 1 {
				names = append(names, tok)
				var skip json.RawMessage
				_ = d.Decode(&skip)
			}
		}
	}
	return &argValidator{schema: s, accepted: strings.Join(names, ", ")}
}

// validate returns nil or an invalidArgs error listing every violation.
func (v *argValidator) validate(args any) error {
	b, err := json.Marshal(args)
	if err != nil {
		return invalidArgs("the arguments are not JSON: %v", err)
	}
	if args == nil || string(b) == "null" {
		b = []byte("{}")
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return invalidArgs("the arguments are not JSON: %v", err)
	}
	err = v.schema.Validate(doc)
	if err == nil {
		return nil
	}
	verr, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return invalidArgs("%v", err)
	}
	var msgs []string
	var leaves func(e *jsonschema.ValidationError)
	leaves = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			at := "arguments"
			if len(e.InstanceLocation) > 0 {
				at = strings.Join(e.InstanceLocation, ".")
			}
			msg := at + ": " + e.ErrorKind.LocalizedString(printer)
			if _, unknown := e.ErrorKind.(*kind.AdditionalProperties); unknown && len(e.InstanceLocation) == 0 {
				msg += " (the arguments are: " + v.accepted + ")"
			}
			msgs = append(msgs, msg)
			return
		}
		for _, c := range e.Causes {
			leaves(c)
		}
	}
	leaves(verr)
	return invalidArgs("%s", strings.Join(msgs, "; "))
}
