package googlefake

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// The fake parses request bodies like Google's proto3 JSON front end: a field is accepted under its
// lowerCamel JSON name or its proto (snake_case) name; an unknown name or a value of the wrong JSON
// type rejects the whole request with "Invalid JSON payload received." Nested messages the uploader
// never sends (user data, cart data, device info, …) are accepted as any JSON object.

type kind int

const (
	kString kind = iota
	kBool
	kDouble
	kEnum
	kTimestamp
	kMessage
	kOpaque // a message whose inside the fake does not check
)

type field struct {
	proto    string
	kind     kind
	repeated bool
	msg      *message
	enumType string // full enum type name, for "Invalid value" messages
}

type message struct {
	fields map[string]*field // keyed by proto name and JSON name
}

func newMessage(fields ...*field) *message {
	m := &message{fields: map[string]*field{}}
	for _, f := range fields {
		m.fields[f.proto] = f
		m.fields[jsonName(f.proto)] = f
	}
	return m
}

func str(name string) *field             { return &field{proto: name, kind: kString} }
func strs(name string) *field            { return &field{proto: name, kind: kString, repeated: true} }
func boolean(name string) *field         { return &field{proto: name, kind: kBool} }
func double(name string) *field          { return &field{proto: name, kind: kDouble} }
func enum(name, typ string) *field       { return &field{proto: name, kind: kEnum, enumType: typ} }
func timestamp(name string) *field       { return &field{proto: name, kind: kTimestamp} }
func msg(name string, m *message) *field { return &field{proto: name, kind: kMessage, msg: m} }
func msgs(name string, m *message) *field {
	return &field{proto: name, kind: kMessage, msg: m, repeated: true}
}
func opaque(name string) *field  { return &field{proto: name, kind: kOpaque} }
func opaques(name string) *field { return &field{proto: name, kind: kOpaque, repeated: true} }

// jsonName is protoc's lowerCamel JSON name of a proto field name.
func jsonName(proto string) string {
	var b strings.Builder
	up := false
	for _, r := range proto {
		if r == '_' {
			up = true
			continue
		}
		if up && r >= 'a' && r <= 'z' {
			r -= 'a' - 'A'
		}
		up = false
		b.WriteRune(r)
	}
	return b.String()
}

// Schema of google.ads.datamanager.v1.IngestEventsRequest (fields of the v1 protos).
var (
	productAccountMsg = newMessage(
		enum("product", "google.ads.datamanager.v1.ProductAccount.Product"),
		str("account_id"),
		enum("account_type", "google.ads.datamanager.v1.ProductAccount.AccountType"),
	)
	destinationMsg = newMessage(
		str("reference"),
		msg("login_account", productAccountMsg),
		msg("linked_account", productAccountMsg),
		msg("operating_account", productAccountMsg),
		str("product_destination_id"),
	)
	consentMsg = newMessage(
		enum("ad_user_data", "google.ads.datamanager.v1.ConsentStatus"),
		enum("ad_personalization", "google.ads.datamanager.v1.ConsentStatus"),
	)
	adIdentifiersMsg = newMessage(
		str("session_attributes"), str("gclid"), str("gbraid"), str("wbraid"),
		opaque("landing_page_device_info"), str("mobile_device_id"), str("dclid"),
		str("impression_id"), str("match_id"), opaques("encrypted_user_ids"),
	)
	eventMsg = newMessage(
		strs("destination_references"), str("transaction_id"),
		timestamp("event_timestamp"), timestamp("last_updated_timestamp"),
		opaque("user_data"), msg("consent", consentMsg), msg("ad_identifiers", adIdentifiersMsg),
		str("currency"), double("conversion_value"), double("conversion_count"),
		enum("event_source", "google.ads.datamanager.v1.EventSource"),
		opaque("event_device_info"), opaque("cart_data"), opaques("custom_variables"),
		opaques("experimental_fields"), opaque("user_properties"), str("event_name"),
		str("client_id"), str("user_id"), opaques("additional_event_parameters"),
		opaque("third_party_user_data"), opaque("event_location"), str("app_instance_id"),
	)
	ingestRequestMsg = newMessage(
		msgs("destinations", destinationMsg),
		msgs("events", eventMsg),
		msg("consent", consentMsg),
		boolean("validate_only"),
		enum("encoding", "google.ads.datamanager.v1.Encoding"),
		opaque("encryption_info"),
	)
)

// parseError is a body Google's front end would refuse before the API sees it.
type parseError struct {
	path    string // proto path, e.g. events[0].ad_identifiers; "" at the top level
	message string
}

func (e *parseError) Error() string { return e.message }

// decodeStrict checks body against m and returns it with every key in its JSON (lowerCamel) name,
// ready for encoding/json.
func decodeStrict(body []byte, m *message) ([]byte, *parseError) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, &parseError{message: "Invalid JSON payload received. " + syntaxMessage(err)}
	}
	if dec.More() {
		return nil, &parseError{message: "Invalid JSON payload received. Unexpected token."}
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, &parseError{message: "Invalid JSON payload received. Expected an object."}
	}
	out, perr := m.canonical(obj, "")
	if perr != nil {
		return nil, perr
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, &parseError{message: "Invalid JSON payload received. " + err.Error()}
	}
	return b, nil
}

func syntaxMessage(err error) string {
	if se, ok := err.(*json.SyntaxError); ok {
		return fmt.Sprintf("Unexpected token at offset %d.", se.Offset)
	}
	return "Unexpected end of string."
}

func (m *message) canonical(obj map[string]any, path string) (map[string]any, *parseError) {
	out := make(map[string]any, len(obj))
	for key, val := range obj {
		f, ok := m.fields[key]
		if !ok {
			at := ""
			if path != "" {
				at = " at '" + path + "'"
			}
			return nil, &parseError{path: path, message: fmt.Sprintf("Invalid JSON payload received. Unknown name %q%s: Cannot find field.", key, at)}
		}
		if val == nil {
			continue // null is the default value
		}
		fpath := joinPath(path, f.proto)
		if f.repeated {
			arr, ok := val.([]any)
			if !ok {
				return nil, invalidValue(fpath, f, val)
			}
			items := make([]any, 0, len(arr))
			for i, item := range arr {
				c, perr := f.value(item, fmt.Sprintf("%s[%d]", fpath, i))
				if perr != nil {
					return nil, perr
				}
				items = append(items, c)
			}
			out[jsonName(f.proto)] = items
			continue
		}
		c, perr := f.value(val, fpath)
		if perr != nil {
			return nil, perr
		}
		out[jsonName(f.proto)] = c
	}
	return out, nil
}

func (f *field) value(v any, path string) (any, *parseError) {
	switch f.kind {
	case kString, kTimestamp, kEnum:
		if s, ok := v.(string); ok {
			return s, nil
		}
		if n, ok := v.(json.Number); ok && f.kind == kEnum {
			return n, nil // enums may be written as numbers
		}
	case kBool:
		if b, ok := v.(bool); ok {
			return b, nil
		}
	case kDouble:
		switch x := v.(type) {
		case json.Number:
			return x, nil
		case string: // proto3 JSON also accepts a quoted number
			if _, err := strconv.ParseFloat(x, 64); err == nil {
				return json.Number(x), nil
			}
		}
	case kMessage:
		if obj, ok := v.(map[string]any); ok {
			return f.msg.canonical(obj, path)
		}
	case kOpaque:
		if _, ok := v.(map[string]any); ok {
			return v, nil
		}
	}
	return nil, invalidValue(path, f, v)
}

func invalidValue(path string, f *field, v any) *parseError {
	typ := map[kind]string{kString: "TYPE_STRING", kBool: "TYPE_BOOL", kDouble: "TYPE_DOUBLE",
		kTimestamp: "type.googleapis.com/google.protobuf.Timestamp", kEnum: "type.googleapis.com/" + f.enumType,
		kMessage: "TYPE_MESSAGE", kOpaque: "TYPE_MESSAGE"}[f.kind]
	if f.repeated {
		typ += " (repeated)"
	}
	raw, _ := json.Marshal(v)
	return &parseError{path: path, message: fmt.Sprintf("Invalid value at '%s' (%s), %s", path, typ, raw)}
}

func joinPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}
