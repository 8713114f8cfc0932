import { useEffect } from 'react';

/** Sets the document title: "<title> · Stega". */
export function useTitle(title: string): void {
  useEffect(() => {
    document.title = title ? `${title} · Stega` : 'Stega';
  }, [title]);
}
