// Command etcd is the etcd server the wrapper's go.mod pins.
//
// etcd's own main package lives in its root module, whose go.mod points the
// server, api and client modules at sibling directories; a dependent module
// cannot build it. The server module exports the same entry point.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
