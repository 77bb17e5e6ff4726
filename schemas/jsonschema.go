package schemas

import (
	"encoding/json"
	"strings"

	"github.com/invopop/jsonschema"
)

// JSONSchema derives the JSON schema of a topic's messages from its Go type, so the published
// schema (schemas/topics/<name>.schema.json) cannot drift from the code: a golden test compares them.
func JSONSchema(t Topic) ([]byte, error) {
	r := jsonschema.Reflector{
		// Fields without omitempty are required; the rest are optional.
		RequiredFromJSONSchemaTags: false,
		DoNotReference:             true,
		// Unknown fields are allowed so that adding an optional field is not a breaking change.
		AllowAdditionalProperties: true,
	}
	s := r.Reflect(t.Message)
	s.ID = jsonschema.ID("https://revtrack.dev/schemas/topics/" + t.Name + ".schema.json")
	s.Title = t.Name
	s.Description = t.Doc + " Key: " + t.Key + "."
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// SchemaFile is the path of a topic's schema under schemas/.
func SchemaFile(t Topic) string {
	return "topics/" + strings.TrimPrefix(t.Name, "revtrack.") + ".schema.json"
}
