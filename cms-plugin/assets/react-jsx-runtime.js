/* Shim for WordPress < 6.6, which has no `react-jsx-runtime` script: the JSX runtime on top of window.React. */
(() => {
  var React = window.React;
  function jsx(type, props, key) {
    var copy = {};
    for (var name in props) {
      if (Object.hasOwn(props, name)) copy[name] = props[name];
    }
    if (key !== undefined) copy.key = key;
    return React.createElement(type, copy);
  }
  window.ReactJSXRuntime = { jsx: jsx, jsxs: jsx, Fragment: React.Fragment };
})();
