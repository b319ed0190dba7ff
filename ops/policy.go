package ops

import (
	"encoding/json"

	"weft/model"
	"weft/store"
)

// The file's settings that hold the memory policies new sessions get
// (model.MemoryPolicy, as JSON): one for every session made, and one for
// the sessions the context proxy starts (when not set, they get the
// first).
const (
	SettingMemoryFile    = "memory/file"
	SettingMemoryProxied = "memory/proxied"
)

// defaultPolicy is the policy a new session gets: the file's for
// proxied sessions, if proxied, else the file's; nil when none is set.
func defaultPolicy(tx store.Tx, proxied bool) *model.MemoryPolicy {
	if proxied {
		if p := DefaultPolicy(tx, SettingMemoryProxied); p != nil {
			return p
		}
	}
	return DefaultPolicy(tx, SettingMemoryFile)
}

// DefaultPolicy reads the file's default policy of setting name; nil
// when it is not set or does not read (a policy that does not read
// makes no change).
func DefaultPolicy(tx store.Tx, name string) *model.MemoryPolicy {
	raw := tx.Setting(name)
	if raw == nil {
		return nil
	}
	var p model.MemoryPolicy
	if json.Unmarshal(raw, &p) != nil || p.Check() != nil {
		return nil
	}
	return &p
}

// DefaultPolicies are the file's memory policies for new sessions, and
// for those the context proxy starts; nil where none is set.
func (s *Service) DefaultPolicies() (file, proxied *model.MemoryPolicy, err error) {
	err = s.st.View(func(tx store.Tx) error {
		file, proxied = DefaultPolicy(tx, SettingMemoryFile), DefaultPolicy(tx, SettingMemoryProxied)
		return nil
	})
	return file, proxied, err
}

// SetDefaultPolicy sets the file's default policy of setting name
// (SettingMemoryFile or SettingMemoryProxied); nil removes it. A policy
// that does not hold is refused.
func (s *Service) SetDefaultPolicy(name string, p *model.MemoryPolicy) error {
	if name != SettingMemoryFile && name != SettingMemoryProxied {
		return Invalidf("no default policy %q", name)
	}
	var raw []byte
	if p != nil {
		if err := p.Check(); err != nil {
			return Invalidf("memory policy: %v", err)
		}
		var err error
		if raw, err = json.Marshal(p); err != nil {
			return err
		}
	}
	return s.st.Update(func(tx store.Tx) error { return tx.PutSetting(name, raw) })
}
