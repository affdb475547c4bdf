# Runs at install time (install(SCRIPT) in CMakeLists.txt): writes the systemd unit from
# tools/cte-server.service.in with the paths of this installation, and installs it.
#
# In: CMAKE_INSTALL_PREFIX (the prefix of this install: `cmake --install --prefix P` sets it)
# and, from install(CODE) just before, CTE_UNIT_TEMPLATE, CTE_UNIT_OUT and the GNUInstallDirs
# directories CTE_BINDIR, CTE_SYSCONFDIR, CTE_DOCDIR, CTE_UNITDIR (relative ones are under the
# prefix). DESTDIR, if set, stages the files but is not part of the paths inside the unit.

function(cte_full_path out dir)
  if(IS_ABSOLUTE "${dir}")
    set(${out} "${dir}" PARENT_SCOPE)
  else()
    set(${out} "${CMAKE_INSTALL_PREFIX}/${dir}" PARENT_SCOPE)
  endif()
endfunction()

cte_full_path(bindir "${CTE_BINDIR}")
cte_full_path(confdir "${CTE_SYSCONFDIR}")
cte_full_path(docdir "${CTE_DOCDIR}")
cte_full_path(unitdir "${CTE_UNITDIR}")
set(CTE_BIN "${bindir}/cte-server")
set(CTE_CONF "${confdir}/cte-server/cte-server.yaml")
set(CTE_DOC_DIR "${docdir}")
configure_file("${CTE_UNIT_TEMPLATE}" "${CTE_UNIT_OUT}" @ONLY)
file(INSTALL DESTINATION "${unitdir}" TYPE FILE FILES "${CTE_UNIT_OUT}")
