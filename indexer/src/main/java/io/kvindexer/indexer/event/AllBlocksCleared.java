package io.kvindexer.indexer.event;

/** The engine reset its prefix cache: every block of this (worker, dp rank), on every tier, is gone. */
public record AllBlocksCleared() implements KvEvent {}
