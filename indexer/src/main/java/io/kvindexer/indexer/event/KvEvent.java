package io.kvindexer.indexer.event;

/** One engine KV-cache event, decoded from a batch (vLLM / SGLang / TensorRT-LLM wire format). */
public sealed interface KvEvent permits BlockStored, BlockRemoved, AllBlocksCleared {}
