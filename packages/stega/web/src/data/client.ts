import { keepPreviousData, QueryClient } from '@tanstack/react-query';
import { ApiError } from '../api.js';

/**
 * The one query cache of the app (TanStack Query): components that ask for the same key share
 * one request and one answer; polls run per query (`refetchInterval`) and pause while the tab is
 * hidden; an unmounted page's request is aborted through the signal each query passes on.
 */
export function createQueryClient(): QueryClient {
  return new QueryClient({
    defaultOptions: {
      queries: {
        // an answer is fresh for a second: a page and its sections mounting together share it
        staleTime: 1000,
        // a refused request (4xx) is the answer; a lost connection is tried again once
        retry: (failures, error) =>
          !(error instanceof ApiError && error.status < 500) && failures < 1,
        refetchOnWindowFocus: true,
        // a new filter or period keeps the last answer on screen until its own arrives
        placeholderData: keepPreviousData,
      },
      mutations: { retry: false },
    },
  });
}
