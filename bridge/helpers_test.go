package bridge

import "io/fs"

var errNotExist = fs.ErrNotExist
