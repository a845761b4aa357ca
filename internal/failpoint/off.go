//go:build !failpoints

package failpoint

// Enabled reports whether this build has failpoints (-tags failpoints).
const Enabled = false

// Hit marks failpoint name; in this build it does nothing.
func Hit(name string) {}
