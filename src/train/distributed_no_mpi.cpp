// The stand-in for distributed training in a build without MPI (POSVEC_MPI=OFF):
// Cluster's constructor and every collective throw ConfigError, which says how to
// build with MPI. distributed_mpi.cpp is the real thing.
#include <cstdlib>

#include "posvec/distributed.hpp"
#include "posvec/error.hpp"

namespace posvec {

bool Cluster::available() { return false; }

namespace {
[[noreturn]] void noMpi() {
  throw ConfigError(
      "this posvec was built without MPI, so it cannot train under mpirun; install Open MPI "
      "(tools/scripts/setup.sh) and rebuild with -DPOSVEC_MPI=ON");
}
}  // namespace

Cluster::Cluster() { noMpi(); }
Cluster::~Cluster() = default;
int Cluster::rank() const { return rank_; }
int Cluster::size() const { return size_; }
void Cluster::abort(int) const { std::abort(); }
void Cluster::agree(const std::string&, ErrorKind) { noMpi(); }
void Cluster::requireSameOptions(const std::string&) { noMpi(); }
void Cluster::requireSameCorpus(const CorpusSource&) { noMpi(); }
ModelState trainDistributed(Cluster&, const CorpusSource&, const TrainConfig&, const SyncOptions&,
                            const TrainObserver&) {
  noMpi();
}
void resumeDistributed(Cluster&, ModelState&, const CorpusSource&, int, const SyncOptions&,
                       const TrainObserver&) {
  noMpi();
}

}  // namespace posvec
