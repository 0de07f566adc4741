// placeholder: owned by the syntax helper (renderError)
export function renderError(error: unknown): string { return String(error); }
