// The widget's own semver: the exact-version asset folder and the major channel (`/widget/v1/`) are named after it.
export const WIDGET_VERSION = "1.0.0";
