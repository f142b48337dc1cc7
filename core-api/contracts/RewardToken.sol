// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {AccessControl} from "@openzeppelin/contracts/access/AccessControl.sol";
import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";
import {ERC20Permit} from "@openzeppelin/contracts/token/ERC20/extensions/ERC20Permit.sol";

/// @title PTS reward token
/// @notice Whole-point loyalty rewards: 0 decimals, gasless approvals (EIP-2612), minted only by the minter role.
contract RewardToken is ERC20, ERC20Permit, AccessControl {
    bytes32 public constant MINTER_ROLE = keccak256("MINTER_ROLE");

    /// @notice `to` and `amounts` of a batch differ in length.
    error MintBatchLengthMismatch(uint256 recipients, uint256 amounts);
    /// @notice A batch with no recipients: almost certainly a caller bug, so it is refused rather than wasting gas.
    error MintBatchEmpty();

    constructor(string memory name_, string memory symbol_, address admin)
        ERC20(name_, symbol_)
        ERC20Permit(name_)
    {
        _grantRole(DEFAULT_ADMIN_ROLE, admin);
    }

    /// @notice Points are indivisible.
    function decimals() public pure override returns (uint8) {
        return 0;
    }

    function mint(address to, uint256 amount) external onlyRole(MINTER_ROLE) {
        _mint(to, amount);
    }

    /// @notice Mints `amounts[i]` to `to[i]`; the minter groups many rewards into one transaction.
    function mintBatch(address[] calldata to, uint256[] calldata amounts) external onlyRole(MINTER_ROLE) {
        uint256 length = to.length;
        if (length != amounts.length) revert MintBatchLengthMismatch(length, amounts.length);
        if (length == 0) revert MintBatchEmpty();
        for (uint256 i = 0; i < length; ++i) {
            _mint(to[i], amounts[i]);
        }
    }
}
