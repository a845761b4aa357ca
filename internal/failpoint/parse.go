package failpoint

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// parse reads "NAME=exit@N,NAME=exit" into the hit each named failpoint
// exits at.
func parse(spec string) (map[string]int64, error) {
	out := map[string]int64{}
	for _, item := range strings.Split(spec, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, action, ok := strings.Cut(item, "=")
		if !ok || !slices.Contains(Names, name) {
			return nil, fmt.Errorf("%q: want NAME=exit[@N] with NAME one of %s", item, strings.Join(Names, ", "))
		}
		n := int64(1)
		if rest, ok := strings.CutPrefix(action, "exit@"); ok {
			v, err := strconv.ParseInt(rest, 10, 64)
			if err != nil || v < 1 {
				return nil, fmt.Errorf("%q: the hit to exit at must be a number from 1", item)
			}
			n = v
		} else if action != "exit" {
			return nil, fmt.Errorf("%q: the action must be exit or exit@N", item)
		}
		out[name] = n
	}
	return out, nil
}
