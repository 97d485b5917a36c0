/** A promise with its resolve handle, to wait for an event instead of sleeping. */
export function deferred<T>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/**
 * A scripted step that holds its answer: `entered` resolves when the step is reached (the model was called),
 * `release` gives the answer.
 */
export function heldStep<T>() {
  const entered = deferred<void>();
  const answer = deferred<T>();
  return {
    step: () => {
      entered.resolve();
      return answer.promise;
    },
    entered: entered.promise,
    release: answer.resolve,
  };
}
