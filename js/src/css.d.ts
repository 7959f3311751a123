// A stylesheet imported by the widget's entry is its text (esbuild's text loader, see
// package.json); the lab extension imports its stylesheets for their side effect only.
declare module "*.css" {
  const text: string;
  export default text;
}
