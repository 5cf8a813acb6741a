# The dashboard's files (web/) compiled into the server as C arrays
# (src/server/ui_assets.h). web/build.mjs bundles web/src with esbuild from
# web/node_modules (installed by `npm ci` from web/package-lock.json, here
# when missing or older than the lock file) and writes ui_assets.c. Where
# node or npm is missing the table is empty and /ui/ says how to build it.
find_program(PX_NODE node)
find_program(PX_NPM npm)
set(px_ui_c ${CMAKE_BINARY_DIR}/web/ui_assets.c)
if(PX_NODE AND PX_NPM)
  file(GLOB px_ui_src CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/web/src/*)
  set(px_ui_modules ${CMAKE_SOURCE_DIR}/web/node_modules/.package-lock.json)
  add_custom_command(OUTPUT ${px_ui_modules}
    COMMAND ${PX_NPM} ci --no-audit --no-fund --loglevel=error
    DEPENDS ${CMAKE_SOURCE_DIR}/web/package-lock.json ${CMAKE_SOURCE_DIR}/web/package.json
    WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}/web
    COMMENT "npm ci: the dashboard's packages (web/package-lock.json)")
  add_custom_command(OUTPUT ${px_ui_c}
    COMMAND ${PX_NODE} ${CMAKE_SOURCE_DIR}/web/build.mjs ${CMAKE_BINARY_DIR}/web
    DEPENDS ${px_ui_src} ${px_ui_modules} ${CMAKE_SOURCE_DIR}/web/build.mjs
    COMMENT "web: bundling the dashboard into ui_assets.c")
  message(STATUS "dashboard: built with ${PX_NODE} into ${px_ui_c}")
else()
  file(WRITE ${px_ui_c} "/* No node/npm at configure time: no dashboard (ui_assets.h). */\n"
       "#include \"server/ui_assets.h\"\n"
       "const struct px_ui_asset px_ui_assets[1] = {{0}};\nconst size_t px_ui_nassets = 0;\n")
  message(WARNING "dashboard: node or npm not found; /ui/ will say so (run make deps)")
endif()
target_sources(phalanx_lib PRIVATE ${px_ui_c})
