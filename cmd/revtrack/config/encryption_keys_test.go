package config

import (
	"encoding/base64"
	"strings"
	"testing"
)

func TestEncryptionKeysValidated(t *testing.T) {
	key := func(id string, n int) string { return id + ":" + base64.StdEncoding.EncodeToString(make([]byte, n)) }
	for setting, ok := range map[string]bool{
		Default().EncryptionKeys:            true,
		key("k2", 32) + "," + key("k1", 32): true,
		"":                                  false,
		key("k1", 16):                       false,
		key("k1", 32) + "," + key("k1", 32): false,
		"k1:%%%":                            false,
	} {
		c := Default()
		c.EncryptionKeys = setting
		err := c.Validate()
		if (err == nil) != ok {
			t.Errorf("encryption-keys %q: %v", setting, err)
		}
		if err != nil && !strings.Contains(err.Error(), "encryption-keys") {
			t.Errorf("error does not name the setting: %v", err)
		}
	}
}
