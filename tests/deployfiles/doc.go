// Package deployfiles holds the offline tests of the deployment examples (deploy/docker-compose.yml,
// deploy/docker-compose.cluster.yml and deploy/cluster/): Compose is not run here and no image is
// pulled, so the tests check what can be checked from the files themselves, against the revtrack
// binary's own flags and against each other (issue 18, item 6).
package deployfiles
