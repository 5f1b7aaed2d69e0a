// Command etcd is etcd v3.6.4, the version Kubernetes v1.34.7 requires.
//
// etcd's own main package lives in its root module, whose go.mod points the
// server, api and client modules at sibling directories; a dependent module
// cannot build it. The server module exports the same entry point, so this
// wrapper only calls it.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
