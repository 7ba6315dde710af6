import type { HubModule, NoOperations } from '../platform/module.js';
import type { ClusterNode } from './cluster-node.js';

export interface ClusterModule extends HubModule<NoOperations> {
  readonly node: ClusterNode;
}

/** This instance's membership of the cluster: joined right after the storage, left before it closes. */
export function clusterModule(node: ClusterNode): ClusterModule {
  return {
    name: 'cluster',
    needs: ['storage'],
    operations: {},
    node,
    start: () => node.start(),
    stop: () => node.stop(),
  };
}
