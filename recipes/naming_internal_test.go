package recipes

import (
	"fmt"
	"testing"
)

func TestSortContenders(t *testing.T) {
	kids := []string{
		"f00d__lock__0000000003", "beef__rlock__0000000001", "cafe__lock__0000000002",
		"foreign", "x__lock__12", "dead__rlock__000000000a",
	}
	got := Kazoo.sortContenders(kids, []role{roleRead, roleWrite})
	if fmt.Sprint(got) != "[{beef__rlock__0000000001 0000000001 1} {cafe__lock__0000000002 0000000002 2} {f00d__lock__0000000003 0000000003 2}]" {
		t.Errorf("kazoo rw: %v", got)
	}
	if got := Kazoo.sortContenders(kids, []role{roleMutex}); len(got) != 2 {
		t.Errorf("kazoo Lock ignores read nodes: %v", got)
	}
	curator := []string{"_c_b-__WRIT__0000000002", "_c_a-__READ__0000000010", "_c_c-__READ__0000000001"}
	got = Curator.sortContenders(curator, []role{roleRead, roleWrite})
	if got[0].name != "_c_c-__READ__0000000001" || got[2].name != "_c_a-__READ__0000000010" {
		t.Errorf("curator rw: %v", got)
	}
	if id := Curator.idOf(got[1]); id != "_c_b-" {
		t.Errorf("idOf = %q", id)
	}
	// A negative sequence (after the parent's cversion wrapped) sorts
	// first, as in kazoo and Curator, which compare strings.
	got = Paddock.sortContenders([]string{"_c_a-lock-0000000001", "_c_b-lock--000000001"}, []role{roleMutex})
	if got[0].seq != "-000000001" {
		t.Errorf("negative sequence: %v", got)
	}
}

func TestParseCompat(t *testing.T) {
	for _, c := range []Compat{Paddock, Kazoo, Curator} {
		if got, err := ParseCompat(c.String()); got != c || err != nil {
			t.Errorf("ParseCompat(%q) = %v, %v", c, got, err)
		}
	}
	if _, err := ParseCompat("zk"); err == nil {
		t.Error("ParseCompat(zk) succeeded")
	}
}

func TestNewID(t *testing.T) {
	id, _ := Curator.newID()
	if len(id) != 36 || id[14] != '4' {
		t.Errorf("curator id %q", id)
	}
	if id, _ := Kazoo.newID(); len(id) != 32 {
		t.Errorf("kazoo id %q", id)
	}
}
