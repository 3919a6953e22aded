// cluster-key-slot (ioredis's own dependency) ships no types: the one function relq uses.
declare module 'cluster-key-slot' {
  /** The Redis Cluster hash slot of a key (its hash tag, when it has one). */
  function calculateSlot(key: string): number;
  export default calculateSlot;
}
