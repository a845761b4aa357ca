//go:build !unix

package herd

import (
	"errors"
	"time"
)

const processCPUSource = ""

func processCPU() (time.Duration, error) { return 0, errors.New("no getrusage on this system") }
